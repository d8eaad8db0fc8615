// The lifecycle status of a fund, derived from its indexed vault events.
import { builder } from '../builder.ts';

export const FundStatusRef = builder.enumType('FundStatus', {
  description:
    "A fund's status, derived from its indexed vault events (ModulePaused, ModuleUnpaused, FundClosed).",
  values: {
    open: { description: 'every module (subscriptions, redemptions, claims) runs' },
    paused: {
      description: 'at least one module is paused and refuses its calls (Health.pausedModules names which)',
    },
    closed: {
      description:
        'closed to new subscriptions for good (FundClosed), whatever is paused; redemptions and settlement go on so holders can exit',
    },
  } as const,
});
