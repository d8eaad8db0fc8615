// Where a NAV record is in its lifecycle on the NavOracle.
import { builder } from '../builder.ts';
import type { NavRow } from '../sources/subgraph.ts';

/** The lifecycle a NAV record goes through, in the words GraphQL's NavStatus and the REST documents both use. */
const NAV_LIFECYCLE =
  'Draft -> PendingVerification (submit) -> Verified (verify) -> Published (publish); a rejection from PendingVerification or Verified returns the record to Draft; Published is final';

/** What each status means, in the words GraphQL's NavStatus and the REST documents both use. */
const NAV_STATUS_MEANINGS = {
  Draft:
    'drafted by the NAV operator (NavDrafted), or sent back by a rejection (NavRejected), where it may be re-drafted',
  PendingVerification: 'submitted for verification (NavSubmitted)',
  Verified: 'approved by a verifier (NavVerified), waiting to be published',
  Published: "published (NavPublished), in epoch order after the fund's previous epoch; final",
} as const satisfies Record<NavRow['status'], string>;

/** The lifecycle and every status's meaning, as the REST documents state them. */
export const NAV_STATUSES_DESCRIBED = `${NAV_LIFECYCLE}. ${Object.entries(NAV_STATUS_MEANINGS)
  .map(([status, meaning]) => `${status}: ${meaning}`)
  .join('; ')}.`;

export const NavStatusRef = builder.enumType('NavStatus', {
  description: `${NAV_LIFECYCLE}.`,
  values: {
    Draft: { description: NAV_STATUS_MEANINGS.Draft },
    PendingVerification: { description: NAV_STATUS_MEANINGS.PendingVerification },
    Verified: { description: NAV_STATUS_MEANINGS.Verified },
    Published: { description: NAV_STATUS_MEANINGS.Published },
  } as const,
});
