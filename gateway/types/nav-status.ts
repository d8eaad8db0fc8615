// Where a NAV record is in its lifecycle on the NavOracle.
import { builder } from '../builder.ts';

export const NavStatusRef = builder.enumType('NavStatus', {
  description:
    'Draft -> PendingVerification (submit) -> Verified (verify) -> Published (publish). A rejection from PendingVerification or Verified sends the record back to Draft; Published is final.',
  values: {
    Draft: {
      description: 'drafted by the NAV operator (NavDrafted), or sent back by a rejection (NavRejected)',
    },
    PendingVerification: { description: 'submitted for verification (NavSubmitted)' },
    Verified: { description: 'approved by a verifier (NavVerified), waiting to be published' },
    Published: {
      description: "published (NavPublished), in epoch order after the fund's previous epoch; final",
    },
  } as const,
});
