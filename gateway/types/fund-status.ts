// The lifecycle status of a fund, derived from its indexed vault events.
import { builder } from '../builder.ts';

export const FundStatusRef = builder.enumType('FundStatus', {
  description:
    'open: every module runs; paused: at least one module (subscriptions, redemptions, claims) is paused; closed: the vault was closed for good.',
  values: ['open', 'paused', 'closed'] as const,
});
