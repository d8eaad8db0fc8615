// A dividend round of a fund for one epoch; proofs come from its verified distribution.
import { getAddress, isAddress } from 'viem';
import { builder } from '../builder.ts';
import { checkAddress, notARecipientMessage } from '../inputs.ts';
import { notFound } from '../errors.ts';
import { formatUnits, isoFromSeconds } from '../format.ts';
import type { RegistryFund } from '../sources/registry.ts';
import type { DividendRoundRow } from '../sources/subgraph.ts';
import { MerkleProofRef } from './merkle-proof.ts';

export interface DividendRoundShape {
  fund: RegistryFund;
  row: DividendRoundRow;
}

export const DividendRoundRef = builder.objectRef<DividendRoundShape>('DividendRound').implement({
  description:
    'A dividend round: a Merkle root over [address, uint256] leaves posted on-chain for one epoch.',
  fields: (t) => ({
    fund: t.string({ description: 'fund slug', resolve: ({ fund }) => fund.slug }),
    epoch: t.int({
      description: "the fund's settlement epoch the round was posted for; with the fund, it names the round",
      resolve: ({ row }) => row.epoch,
    }),
    merkleRoot: t.string({
      description: 'Merkle root posted on-chain (DividendRoundPosted), 0x 32-byte hex',
      resolve: ({ row }) => row.merkleRoot,
    }),
    total: t.string({
      description: 'sum of all leaves: decimal string in the base asset (BaseAsset.decimals applied)',
      resolve: ({ row, fund }) => formatUnits(row.total, fund.baseAsset.decimals),
    }),
    leafCount: t.int({
      description: 'number of leaves, one per recipient',
      resolve: ({ row }) => row.leafCount,
    }),
    uri: t.string({
      description:
        "path of the round's distribution file (an OpenZeppelin StandardMerkleTree dump) as posted on-chain, relative to the service's distribution base (its DISTRIBUTIONS_BASE setting, a directory or URL this API does not serve): read `proof` for an account instead",
      resolve: ({ row }) => row.uri,
    }),
    claimedCount: t.int({
      description: 'claims indexed so far (DividendClaimed events)',
      resolve: ({ row }) => row.claimedCount,
    }),
    claimedAmount: t.string({
      description: 'sum claimed so far: decimal string in the base asset',
      resolve: ({ row, fund }) => formatUnits(row.claimedAmount, fund.baseAsset.decimals),
    }),
    postedAt: t.string({
      description: 'block time of the posting transaction, ISO 8601 UTC with milliseconds',
      resolve: ({ row }) => isoFromSeconds(row.postedAt),
    }),
    postedBlock: t.int({
      description: 'number of the block holding the posting transaction',
      resolve: ({ row }) => Number(row.postedAtBlock),
    }),
    postedTxHash: t.string({
      description: 'hash of the posting transaction, 0x 32-byte hex',
      resolve: ({ row }) => row.postedTxHash,
    }),
    proof: t.field({
      type: MerkleProofRef,
      // an address without a leaf fails this field alone, not the round around it
      nullable: true,
      description:
        "the proof for one account, from the round's distribution once it is checked against the round (its root is merkleRoot, its leaves number leafCount and sum to total, one per address). Null, with an error: NOT_FOUND when the account has no leaf in this round, BAD_INPUT for a malformed address, UPSTREAM_UNAVAILABLE when the distribution cannot be read or fails a check (the message says which)",
      args: {
        address: t.arg.string({
          required: true,
          description:
            "the account to prove: 0x followed by 40 hex digits, any case. Only the round's recipients (the leaves of its distribution) have a proof; they are not listed by this API",
        }),
      },
      resolve: async ({ row, fund }, args, ctx) => {
        const account = checkAddress('address', args.address);
        const distribution = await ctx.distributions.load(row);
        const found = distribution.leafOf(account);
        if (!found) throw notFound(notARecipientMessage(args.address, row.epoch, fund.slug));
        // viem, and so the isClaimed read and the claim call, take an address in lowercase or with its
        // EIP-55 checksum only; a file may write one in capitals or with a wrong checksum, which hash alike
        const recipient = isAddress(found.account) ? found.account : getAddress(found.account.toLowerCase());
        const distributor = ctx.registry.contractOfKind('DividendDistributor')?.address ?? null;
        return {
          fund: fund.slug,
          vault: fund.vault,
          epoch: row.epoch,
          account: recipient,
          amount: formatUnits(found.amount, fund.baseAsset.decimals),
          amountRaw: found.amount.toString(),
          merkleRoot: distribution.root,
          leaf: found.leaf,
          proof: found.proof,
          distributor,
        };
      },
    }),
  }),
});
