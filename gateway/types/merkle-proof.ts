// A Merkle proof for one account's dividend, checked against the round's on-chain root, with the
// DividendDistributor.claim call it makes (claim-call.ts).
import { builder } from '../builder.ts';
import {
  CLAIM_REVERTS,
  CLAIM_SENDER,
  CLAIM_SIGNATURE,
  CLAIMED_FRESHNESS,
  claimCall,
} from '../claim-function.ts';
import { ClaimCallRef } from './claim-call.ts';

interface MerkleProofShape {
  fund: string;
  vault: string;
  epoch: number;
  account: string;
  amount: string;
  amountRaw: string;
  merkleRoot: string;
  leaf: string;
  proof: string[];
  distributor: string | null;
}

export const MerkleProofRef = builder.objectRef<MerkleProofShape>('MerkleProof').implement({
  description: `A StandardMerkleTree proof (leaf encoding [address, uint256]) verified against the on-chain root, and the claim call it makes (field claim): ${CLAIM_SIGNATURE} on the DividendDistributor. ${CLAIM_SENDER}. ${CLAIM_REVERTS}. ${CLAIMED_FRESHNESS}.`,
  fields: (t) => ({
    fund: t.exposeString('fund', { description: 'fund slug' }),
    vault: t.exposeString('vault', {
      description: 'fund vault address as the registry writes it: the `fund` argument of claim',
    }),
    epoch: t.exposeInt('epoch', {
      description: 'epoch of the round: the `epoch` argument of claim, a uint64',
    }),
    account: t.exposeString('account', {
      description:
        "the recipient as the round's distribution writes it, whatever case was asked for (with its EIP-55 checksum where the file writes it in capitals or with a wrong checksum): the `account` argument of claim, and who is paid",
    }),
    amount: t.exposeString('amount', {
      description: 'dividend as a decimal string in the base asset (BaseAsset.decimals applied)',
    }),
    amountRaw: t.exposeString('amountRaw', {
      description: 'dividend as an integer string in base units: the `amount` argument of claim, a uint256',
    }),
    merkleRoot: t.exposeString('merkleRoot', {
      description: "the round's on-chain root, 0x 32-byte hex, which the proof was checked against",
    }),
    leaf: t.exposeString('leaf', {
      description: 'keccak256(bytes.concat(keccak256(abi.encode(account, amountRaw)))), 0x 32-byte hex',
    }),
    proof: t.exposeStringList('proof', {
      description: 'sibling hashes from leaf to root, 0x 32-byte hex: the `proof` argument of claim',
    }),
    claimed: t.boolean({
      // read only when asked for, and its failure nulls this field alone, not the proof around it
      nullable: true,
      description:
        "DividendDistributor.isClaimed(vault, epoch, account), read live; null when no chain RPC is configured or distributor is null, and null with an UPSTREAM_UNAVAILABLE error when the RPC fails (the proof's other fields are still answered)",
      resolve: (p, _a, ctx) =>
        ctx.chain && p.distributor !== null
          ? ctx.chain.isClaimed(p.distributor as `0x${string}`, p.vault, BigInt(p.epoch), p.account)
          : null,
    }),
    distributor: t.exposeString('distributor', {
      nullable: true,
      description:
        'the DividendDistributor to call claim on, as the registry lists it; null when the registry lists none',
    }),
    claim: t.field({
      type: ClaimCallRef,
      nullable: true,
      description: `the DividendDistributor.claim transaction paying this dividend (${CLAIM_SIGNATURE}), with its selector, arguments and calldata; null when distributor is null`,
      resolve: (p) => (p.distributor === null ? null : claimCall(p, p.distributor)),
    }),
  }),
});
