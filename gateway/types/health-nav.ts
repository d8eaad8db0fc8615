// The most recent NAV publication across all funds.
import { builder } from '../builder.ts';

export const HealthNavRef = builder
  .objectRef<{ latestEpoch: number; publishedAt: string }>('HealthNav')
  .implement({
    description: 'The latest published NAV across funds.',
    fields: (t) => ({
      latestEpoch: t.exposeInt('latestEpoch', { description: 'epoch of the most recently published NAV' }),
      publishedAt: t.exposeString('publishedAt', {
        description: 'block time of its publication, ISO 8601 UTC with milliseconds',
      }),
    }),
  });
