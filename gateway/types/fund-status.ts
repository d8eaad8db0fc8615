// The lifecycle status of a fund, derived from its indexed vault events.
import { builder } from '../builder.ts';

/**
 * What each status means, in the words GraphQL's FundStatus and the REST documents both use.
 * `closed` stops subscriptions only (FundVault.requestSubscription checks it; redemption requests
 * and settlement do not), so holders can still exit.
 */
export const FUND_STATUS_MEANINGS = {
  open: 'every module (subscriptions, redemptions, claims) runs',
  paused: 'at least one module is paused and refuses its calls',
  closed:
    'closed to new subscriptions for good (FundClosed), whatever is paused; redemptions and settlement go on so holders can exit',
} as const;

export const FundStatusRef = builder.enumType('FundStatus', {
  description:
    "A fund's status, derived from its indexed vault events (ModulePaused, ModuleUnpaused, FundClosed).",
  values: {
    open: { description: FUND_STATUS_MEANINGS.open },
    paused: { description: `${FUND_STATUS_MEANINGS.paused} (Health.pausedModules names which)` },
    closed: { description: FUND_STATUS_MEANINGS.closed },
  } as const,
});
