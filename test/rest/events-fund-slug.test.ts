// GET /v1/events?fund= given what is no slug (a fund's display name, a slug in capitals) is refused
// with 400 in the words of an unknown slug in a path or in GraphQL fund(slug:), naming the slug meant,
// where it was refused with the bare slug rule.
import { describe, expect, it } from 'vitest';
import { restServiceForSuite } from '../harness/stack.ts';
import { call } from './openapi-responses.ts';

const service = restServiceForSuite();

describe('GET /v1/events with a fund filter that is no slug', () => {
  it.each([
    ["the fund's display name", 'Harbor Stable Yield Fund'],
    ['the slug in capitals', 'HARBOR-STABLE-YIELD'],
  ])('given %s is refused with 400 naming the slug meant', async (_name, value) => {
    const { status, body } = await call(service.base, `/v1/events?fund=${encodeURIComponent(value)}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({
      type: expect.stringMatching(/\/problems\/invalid-parameter$/),
      parameter: 'fund',
      detail: `No fund has slug "${value}": fund slugs are lowercase letters, digits and single hyphens. Did you mean "harbor-stable-yield"? List fund slugs with GET /v1/funds or the GraphQL query { funds { slug } }.`,
    });
  });
});
