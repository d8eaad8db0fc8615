// A human-readable summary of a seeded devnet: addresses, counts and the seeding time. Printed by
// `npm run devnet` and by the test harness.
import type { Deployment } from './deploy.ts';
import type { Ledger } from './ledger.ts';

export function summarizeLedger(deployment: Deployment, ledger: Ledger): string {
  const lines = ['contracts:'];
  for (const [name, address] of Object.entries(deployment.contracts))
    lines.push(`  ${name.padEnd(20)} ${address}`);
  lines.push('funds:');
  for (const fund of deployment.funds) {
    const state = ledger.funds.find((f) => f.slug === fund.slug);
    lines.push(
      `  ${fund.slug.padEnd(20)} vault ${fund.vault} shares ${fund.shareToken} ${fund.policyName}` +
        (state
          ? ` epochs ${state.firstEpoch}..${state.lastEpoch} ${state.status}, ${state.holders} holders`
          : ''),
    );
  }
  const rejections = ledger.navRecords.reduce(
    (n, r) => n + r.transitions.filter((t) => t.action === 'reject').length,
    0,
  );
  lines.push(
    `blocks ${ledger.startBlock}..${ledger.endBlock}, ${ledger.txCount} transactions, ` +
      `${ledger.totalEvents} events (${ledger.trackedEvents} from tracked contracts)`,
    `${ledger.settlements.length} settlements, ${ledger.requests.length} requests, ${ledger.navRecords.length} NAV records ` +
      `(${rejections} rejections), ${ledger.rounds.length} dividend rounds, ${ledger.claims.length} claims, ` +
      `${ledger.allocations.length} allocation changes, ${ledger.moduleChanges.length} pause/unpause`,
    `seeded in ${(ledger.seedingMs / 1000).toFixed(1)} s`,
  );
  return lines.join('\n');
}
