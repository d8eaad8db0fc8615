// A dividend round of a fund for one epoch; proofs come from its verified distribution.
import { builder } from '../builder.ts';
import { checkAddress, notARecipientMessage } from '../inputs.ts';
import { notFound } from '../errors.ts';
import { formatUnits, isoFromSeconds } from '../format.ts';
import { distributorAbi } from '../sources/chain.ts';
import type { DistributionTree } from '../sources/distributions.ts';
import type { RegistryFund } from '../sources/registry.ts';
import type { DividendRoundRow } from '../sources/subgraph.ts';
import { MerkleProofRef } from './merkle-proof.ts';

export interface DividendRoundShape {
  fund: RegistryFund;
  row: DividendRoundRow;
}

// index of each account in a tree, built once per verified tree
const accountIndexes = new WeakMap<DistributionTree, Map<string, number>>();
function accountIndex(tree: DistributionTree): Map<string, number> {
  let index = accountIndexes.get(tree);
  if (!index) {
    index = new Map();
    for (const [i, [account]] of tree.entries()) index.set(account.toLowerCase(), i);
    accountIndexes.set(tree, index);
  }
  return index;
}

export const DividendRoundRef = builder.objectRef<DividendRoundShape>('DividendRound').implement({
  description:
    'A dividend round: a Merkle root over [address, uint256] leaves posted on-chain for one epoch.',
  fields: (t) => ({
    fund: t.string({ description: 'fund slug', resolve: ({ fund }) => fund.slug }),
    epoch: t.int({ resolve: ({ row }) => row.epoch }),
    merkleRoot: t.string({ resolve: ({ row }) => row.merkleRoot }),
    total: t.string({
      description: 'sum of all leaves in the base asset, decimal',
      resolve: ({ row, fund }) => formatUnits(row.total, fund.baseAsset.decimals),
    }),
    leafCount: t.int({ resolve: ({ row }) => row.leafCount }),
    uri: t.string({
      description: 'distribution file, relative to the distribution base',
      resolve: ({ row }) => row.uri,
    }),
    claimedCount: t.int({ resolve: ({ row }) => row.claimedCount }),
    claimedAmount: t.string({
      description: 'sum claimed so far, decimal',
      resolve: ({ row, fund }) => formatUnits(row.claimedAmount, fund.baseAsset.decimals),
    }),
    postedAt: t.string({ resolve: ({ row }) => isoFromSeconds(row.postedAt) }),
    postedBlock: t.int({ resolve: ({ row }) => Number(row.postedAtBlock) }),
    postedTxHash: t.string({ resolve: ({ row }) => row.postedTxHash }),
    proof: t.field({
      type: MerkleProofRef,
      // an address without a leaf fails this field alone, not the round around it
      nullable: true,
      description:
        'the proof for one account. Null, with a NOT_FOUND error, when the account has no leaf in this round (BAD_INPUT for a malformed address).',
      args: { address: t.arg.string({ required: true }) },
      resolve: async ({ row, fund }, args, ctx) => {
        const account = checkAddress('address', args.address);
        const tree = await ctx.distributions.load(row.uri, row.merkleRoot);
        const index = accountIndex(tree).get(account);
        if (index === undefined) throw notFound(notARecipientMessage(args.address, row.epoch, fund.slug));
        const [leafAccount, amountRaw] = tree.at(index) as [string, string];
        const distributor = ctx.registry.contractOfKind('DividendDistributor')?.address ?? null;
        const claimed =
          ctx.chain && distributor
            ? await ctx.chain.read<boolean>({
                address: distributor as `0x${string}`,
                abi: distributorAbi,
                functionName: 'isClaimed',
                args: [fund.vault, BigInt(row.epoch), leafAccount],
              })
            : null;
        return {
          fund: fund.slug,
          vault: fund.vault,
          epoch: row.epoch,
          account: leafAccount,
          amount: formatUnits(amountRaw, fund.baseAsset.decimals),
          amountRaw: BigInt(amountRaw).toString(),
          merkleRoot: tree.root,
          leaf: tree.leafHash([leafAccount, amountRaw]),
          proof: tree.getProof(index),
          claimed,
          distributor,
        };
      },
    }),
  }),
});
