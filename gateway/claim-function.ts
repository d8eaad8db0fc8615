// The DividendDistributor.claim call a dividend proof makes: an agent sends that call as it stands,
// so its signature, selector, arguments and calldata come from the distributor's ABI as the
// subgraph ships it, never from a hand-written signature (one that took epoch for a uint256 would
// name another function). The wording every document uses for claims (GraphQL's descriptions, the
// REST routes' and schemas', llms.txt, agents.json) lives here too. The GraphQL types ClaimCall and
// ClaimArgument (types/claim-call.ts, types/claim-argument.ts) describe what claimCall builds.
import { encodeFunctionData, toFunctionSelector, toFunctionSignature, type AbiFunction } from 'viem';
import { abiPath, readAbi, readManifest } from '../subgraph/manifest.ts';
import type { ClaimArgumentShape } from './types/claim-argument.ts';

/** DividendDistributor's `claim` as its ABI declares it (subgraph/abis, copied from the compile output) */
function distributorClaimFunction(): AbiFunction {
  const source = readManifest().find((s) => s.name === 'DividendDistributor');
  if (!source) throw new Error('subgraph.yaml has no DividendDistributor data source');
  const claim = readAbi(source).find(
    (item): item is AbiFunction => item.type === 'function' && item.name === 'claim',
  );
  if (!claim) throw new Error(`${abiPath(source)} declares no claim function`);
  return claim;
}

const CLAIM_FUNCTION = distributorClaimFunction();

/** `claim(address,uint64,address,uint256,bytes32[])`: the canonical signature the selector hashes */
export const CLAIM_SIGNATURE = toFunctionSignature(CLAIM_FUNCTION);
const CLAIM_SELECTOR = toFunctionSelector(CLAIM_FUNCTION);

/** what of a proof the claim call takes */
interface ClaimedLeaf {
  vault: string;
  epoch: number;
  account: string;
  amountRaw: string;
  proof: readonly string[];
}

/** The value of each of claim's parameters, by the ABI's parameter name, taken from a proof. */
const CLAIM_VALUES: Record<string, (p: ClaimedLeaf) => string | string[]> = {
  fund: (p) => p.vault,
  epoch: (p) => String(p.epoch),
  account: (p) => p.account,
  amount: (p) => p.amountRaw,
  proof: (p) => [...p.proof],
};
// a contract whose claim takes other parameters needs this table changed, not a call that reverts
if (
  CLAIM_FUNCTION.inputs.some((input) => !input.name || !(input.name in CLAIM_VALUES)) ||
  CLAIM_FUNCTION.inputs.length !== Object.keys(CLAIM_VALUES).length
) {
  throw new Error(
    `DividendDistributor's ABI declares ${CLAIM_SIGNATURE} with parameters (${CLAIM_FUNCTION.inputs.map((i) => i.name).join(', ')}); the proof fills fund, epoch, account, amount, proof`,
  );
}

/**
 * Who sends the claim and who is paid, in the one wording every document uses: the contract lets
 * anyone submit a claim and always pays the leaf's account.
 */
export const CLAIM_SENDER =
  "Any wallet may send the claim transaction (the holder's own or any other, such as a relayer); the dividend is always paid to `account`, whoever sends it. The service never signs or sends transactions";

/** Why claim reverts, from DividendDistributor.claim in the order it checks. */
export const CLAIM_REVERTS =
  "claim reverts with ClaimsPaused(fund) while the fund's claims module is paused (health's pausedModules lists it as \"<fund slug>:claims\": GET /v1/health, or health { pausedModules }), UnknownRound(fund, epoch) when no round is posted for that epoch, AlreadyClaimed(fund, epoch, account) once the leaf is claimed, and InvalidProof() when account, amount and proof do not verify against the round's root (an amount given decimal-scaled instead of amountRaw, say)";

/** How old `claimed` may be and what to do about it. */
export const CLAIMED_FRESHNESS =
  '`claimed` is read on-chain when the service builds the answer, and the service rebuilds its own copy once a newer block is indexed; an HTTP cache between you and the service (browser, proxy, CDN) may still hold a REST proof for up to its max-age (300 s, the history tier), so simulate the call (eth_call with the same `to` and `data`) before sending it, or revalidate with If-None-Match or Cache-Control: no-cache';

/** the claim transaction as claimCall builds it: the GraphQL type ClaimCall's shape */
export interface ClaimCallShape {
  to: string;
  signature: string;
  selector: string;
  args: ClaimArgumentShape[];
  data: string;
}

/** The DividendDistributor.claim call that pays `proof`'s dividend: its arguments in the ABI's order. */
export function claimCall(proof: ClaimedLeaf, distributor: string): ClaimCallShape {
  const args = CLAIM_FUNCTION.inputs.map((input) => {
    const name = input.name as string;
    return {
      name,
      type: input.type,
      value: (CLAIM_VALUES[name] as (p: ClaimedLeaf) => string | string[])(proof),
    };
  });
  return {
    to: distributor,
    signature: CLAIM_SIGNATURE,
    selector: CLAIM_SELECTOR,
    args,
    data: encodeFunctionData({
      abi: [CLAIM_FUNCTION],
      functionName: CLAIM_FUNCTION.name,
      // viem takes integers of any width as bigint
      args: args.map(({ type, value }) => (type.startsWith('uint') ? BigInt(value as string) : value)),
    }),
  };
}
