// A Merkle proof for one account's dividend, ready for DividendDistributor.claim.
import { builder } from '../builder.ts';

export interface MerkleProofShape {
  fund: string;
  vault: string;
  epoch: number;
  account: string;
  amount: string;
  amountRaw: string;
  merkleRoot: string;
  leaf: string;
  proof: string[];
  claimed: boolean | null;
  distributor: string | null;
}

export const MerkleProofRef = builder.objectRef<MerkleProofShape>('MerkleProof').implement({
  description:
    'A StandardMerkleTree proof (leaf encoding [address, uint256]) verified against the on-chain root. Claim with DividendDistributor.claim(vault, epoch, account, amountRaw, proof) from any wallet.',
  fields: (t) => ({
    fund: t.exposeString('fund', { description: 'fund slug' }),
    vault: t.exposeString('vault', { description: 'fund vault address, the `fund` argument of claim' }),
    epoch: t.exposeInt('epoch'),
    account: t.exposeString('account'),
    amount: t.exposeString('amount', { description: 'dividend in the base asset, decimal' }),
    amountRaw: t.exposeString('amountRaw', {
      description: 'dividend in base units, the `amount` argument of claim',
    }),
    merkleRoot: t.exposeString('merkleRoot'),
    leaf: t.exposeString('leaf', {
      description: 'keccak256(bytes.concat(keccak256(abi.encode(account, amount))))',
    }),
    proof: t.exposeStringList('proof', { description: 'sibling hashes, leaf to root' }),
    claimed: t.exposeBoolean('claimed', {
      nullable: true,
      description: 'DividendDistributor.isClaimed, read live; null when no chain RPC is configured',
    }),
    distributor: t.exposeString('distributor', {
      nullable: true,
      description: 'DividendDistributor address',
    }),
  }),
});
