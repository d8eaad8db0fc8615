// Where a NAV record is in its lifecycle on the NavOracle.
import { builder } from '../builder.ts';

export const NavStatusRef = builder.enumType('NavStatus', {
  description:
    'Draft -> PendingVerification (submit) -> Verified (verify) -> Published (publish). A rejection from PendingVerification or Verified sends the record back to Draft; Published is final.',
  values: ['Draft', 'PendingVerification', 'Verified', 'Published'] as const,
});
