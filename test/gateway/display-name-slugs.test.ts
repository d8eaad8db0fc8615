// A client that takes a display name for a slug ("Harbor Stable Yield Fund" for harbor-stable-yield,
// as agents reading a fund's page do) is told the slug it meant, as one that guessed the case of a
// slug is: the name matches a registered entry exactly, in any case.
import { describe, expect, it } from 'vitest';
import { slugNamed, unknownSlugMessage } from '../../gateway/inputs.ts';
import { graphql, registryOnlyGateway } from '../harness/stack.ts';

const FUNDS = [
  { slug: 'harbor-stable-yield', name: 'Harbor Stable Yield Fund', nameCn: '港湾稳健收益基金' },
  { slug: 'summit-kelly-growth', name: 'Summit Kelly Growth Fund', nameCn: '峰顶凯利成长基金' },
];
const listing = 'List fund slugs with GET /v1/funds or the GraphQL query { funds { slug } }.';

describe('a display name given for a slug', () => {
  it('is matched to its slug in any case, in English or Chinese', () => {
    expect(slugNamed(FUNDS, 'Harbor Stable Yield Fund')).toBe('harbor-stable-yield');
    expect(slugNamed(FUNDS, 'summit KELLY growth fund')).toBe('summit-kelly-growth');
    expect(slugNamed(FUNDS, '港湾稳健收益基金')).toBe('harbor-stable-yield');
    expect(slugNamed(FUNDS, 'Harbor Stable Yield')).toBeUndefined();
  });

  it('gets a not-found message suggesting the slug', () => {
    const message = unknownSlugMessage(
      'fund',
      'Harbor Stable Yield Fund',
      new Map(FUNDS.map((fund) => [fund.slug, fund])),
    );
    expect(message).toBe(
      `No fund has slug "Harbor Stable Yield Fund": fund slugs are lowercase letters, digits and single hyphens. Did you mean "harbor-stable-yield"? ${listing}`,
    );
  });

  it('gets the slug suggested by fund(slug:) over GraphQL', async () => {
    const { data, errors } = await graphql(
      registryOnlyGateway(),
      '{ fund(slug: "harbor stable yield fund") { slug } }',
    );
    expect(data?.fund).toBeNull();
    expect(errors?.map((e) => [e.extensions?.code, e.message])).toEqual([
      [
        'NOT_FOUND',
        `No fund has slug "harbor stable yield fund": fund slugs are lowercase letters, digits and single hyphens. Did you mean "harbor-stable-yield"? ${listing}`,
      ],
    ]);
  });
});
