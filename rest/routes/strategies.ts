// Routes of the strategy catalogue: the list and one strategy. Both come from the registry file,
// so they have examples on every network, and both show a strategy the same way.
import type { DocumentExamples } from '../examples.ts';
import type { RouteSpec } from '../routes.ts';
import { slugParam } from './shared-params.ts';

const STRATEGY_FIELDS = `slug name nameCn address category description explorer ratings {
  quantitative { sharpe maxDrawdownBps volatilityBps annualReturnBps score }
  qualitative { grade risk liquidity summary } }`;

const strategyExample = ({ strategy, explorerUrl }: DocumentExamples) => ({
  slug: strategy.slug,
  name: strategy.name,
  nameCn: strategy.nameCn,
  address: strategy.address,
  category: strategy.category,
  description: strategy.description,
  explorer: explorerUrl(strategy.address),
  ratings: strategy.ratings,
});

export function listStrategiesRoute(examples: DocumentExamples): RouteSpec {
  return {
    operationId: 'listStrategies',
    path: '/v1/strategies',
    summary: 'Strategy catalogue',
    description:
      'Every strategy with quantitative and qualitative ratings. Slugs from here build /v1/strategies/{slug}.',
    tier: 'reference',
    params: [],
    document: `query { strategies { ${STRATEGY_FIELDS} } }`,
    toBody: (d) => ({ items: d.strategies, count: d.strategies.length }),
    responseSchema: 'StrategyList',
    example: { items: [strategyExample(examples)], count: 1 },
  };
}

export function getStrategyRoute(examples: DocumentExamples): RouteSpec {
  return {
    operationId: 'getStrategy',
    path: '/v1/strategies/{slug}',
    summary: 'One strategy',
    description: 'A strategy with its ratings.',
    tier: 'reference',
    params: [slugParam('strategy', examples)],
    document: `query($slug: String!) { strategy(slug: $slug) { ${STRATEGY_FIELDS} } }`,
    toBody: (d) => ({ data: d.strategy }),
    responseSchema: 'StrategyDetail',
    notFoundWhen: 'the slug names no strategy',
    example: { data: strategyExample(examples) },
  };
}
