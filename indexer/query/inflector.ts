// graph-node names an entity type's query fields with the Rust crate Inflector 0.11.4
// (graph/src/data/graphql/ext.rs camel_cased_names: `name.to_camel_case()` and
// `name.to_plural().to_camel_case()`). Its rules are ported here as they are, quirks included, since
// a client's query names the fields: `ERC20Token` gives `erc20Token`, `NFTSale` gives `nftsale`,
// `Leaf` gives `leaves`, and `ProtocolStats`, whose plural is itself, gives
// `protocolStats_collection`.
//
// Entity type names are GraphQL names (ASCII letters, digits and `_`), so the ASCII `\w` of these
// regular expressions matches what the crate's Unicode `\w` matches on them.

/** Inflector's `UNACCONTABLE_WORDS` (src/string/constants): their plural is the word itself. */
const UNCOUNTABLE_WORDS: ReadonlySet<string> = new Set([
  'accommodation', 'adulthood', 'advertising', 'advice', 'aggression', 'aid', 'air', 'aircraft',
  'alcohol', 'anger', 'applause', 'arithmetic', 'assistance', 'athletics',
  'bacon', 'baggage', 'beef', 'biology', 'blood', 'botany', 'bread', 'butter',
  'carbon', 'cardboard', 'cash', 'chalk', 'chaos', 'chess', 'crossroads', 'countryside',
  'dancing', 'deer', 'dignity', 'dirt', 'dust',
  'economics', 'education', 'electricity', 'engineering', 'enjoyment', 'envy', 'equipment', 'ethics',
  'evidence', 'evolution',
  'fame', 'fiction', 'flour', 'flu', 'food', 'fuel', 'fun', 'furniture',
  'gallows', 'garbage', 'garlic', 'genetics', 'gold', 'golf', 'gossip', 'grammar', 'gratitude', 'grief',
  'guilt', 'gymnastics',
  'happiness', 'hardware', 'harm', 'hate', 'hatred', 'health', 'heat', 'help', 'homework', 'honesty',
  'honey', 'hospitality', 'housework', 'humour', 'hunger', 'hydrogen',
  'ice', 'importance', 'inflation', 'information', 'innocence', 'iron', 'irony',
  'jam', 'jewelry', 'judo',
  'karate', 'knowledge',
  'lack', 'laughter', 'lava', 'leather', 'leisure', 'lightning', 'linguine', 'linguini', 'linguistics',
  'literature', 'litter', 'livestock', 'logic', 'loneliness', 'luck', 'luggage',
  'macaroni', 'machinery', 'magic', 'management', 'mankind', 'marble', 'mathematics', 'mayonnaise',
  'measles', 'methane', 'milk', 'money', 'mud', 'music', 'mumps',
  'nature', 'news', 'nitrogen', 'nonsense', 'nurture', 'nutrition',
  'obedience', 'obesity', 'oxygen',
  'pasta', 'patience', 'physics', 'poetry', 'pollution', 'poverty', 'pride', 'psychology', 'publicity',
  'punctuation',
  'quartz',
  'racism', 'relaxation', 'reliability', 'research', 'respect', 'revenge', 'rice', 'rubbish', 'rum',
  'safety', 'scenery', 'seafood', 'seaside', 'series', 'shame', 'sheep', 'shopping', 'sleep', 'smoke',
  'smoking', 'snow', 'soap', 'software', 'soil', 'spaghetti', 'species', 'steam', 'stuff', 'stupidity',
  'sunshine', 'symmetry',
  'tennis', 'thirst', 'thunder', 'timber', 'traffic', 'transportation', 'trust',
  'underwear', 'unemployment', 'unity',
  'validity', 'veal', 'vegetation', 'vegetarianism', 'vengeance', 'violence', 'vitality',
  'warmth', 'wealth', 'weather', 'welfare', 'wheat', 'wildlife', 'wisdom', 'yoga',
  'zinc', 'zoology',
]); // prettier-ignore

/** `to_plural`'s special cases, matched against the whole word. */
const SPECIAL_PLURALS: ReadonlyMap<string, string> = new Map([
  ['ox', 'oxen'],
  ['man', 'men'],
  ['woman', 'women'],
  ['die', 'dice'],
  ['yes', 'yeses'],
  ['foot', 'feet'],
  ['eave', 'eaves'],
  ['goose', 'geese'],
  ['tooth', 'teeth'],
  ['quiz', 'quizzes'],
]);

/**
 * `to_plural`'s rules in the crate's order; they are tried last to first, and the first that matches
 * gives the plural: its first capture followed by the replacement.
 */
const PLURAL_RULES: readonly (readonly [RegExp, string])[] = [
  [/(\w*)s$/, 's'],
  [/(\w*([^aeiou]ese))$/, ''],
  [/(\w*(ax|test))is$/, 'es'],
  [/(\w*(alias|[^aou]us|tlas|gas|ris))$/, 'es'],
  [/(\w*(e[mn]u))s?$/, 's'],
  [/(\w*([^l]ias|[aeiou]las|[emjzr]as|[iu]am))$/, ''],
  [
    /(\w*(alumn|syllab|octop|vir|radi|nucle|fung|cact|stimul|termin|bacill|foc|uter|loc|strat))(?:us|i)$/,
    'i',
  ],
  [/(\w*(alumn|alg|vertebr))(?:a|ae)$/, 'ae'],
  [/(\w*(seraph|cherub))(?:im)?$/, 'im'],
  [/(\w*(her|at|gr))o$/, 'oes'],
  [
    /(\w*(agend|addend|millenni|dat|extrem|bacteri|desiderat|strat|candelabr|errat|ov|symposi|curricul|automat|quor))(?:a|um)$/,
    'a',
  ],
  [
    /(\w*(apheli|hyperbat|periheli|asyndet|noumen|phenomen|criteri|organ|prolegomen|hedr|automat))(?:a|on)$/,
    'a',
  ],
  [/(\w*)sis$/, 'ses'],
  [/(\w*(kni|wi|li))fe$/, 'ves'],
  [/(\w*(ar|l|ea|eo|oa|hoo))f$/, 'ves'],
  [/(\w*([^aeiouy]|qu))y$/, 'ies'],
  [/(\w*([^ch][ieo][ln]))ey$/, 'ies'],
  [/(\w*(x|ch|ss|sh|zz)es)$/, ''],
  [/(\w*(x|ch|ss|sh|zz))$/, 'es'],
  [/(\w*(matr|cod|mur|sil|vert|ind|append))(?:ix|ex)$/, 'ices'],
  [/(\w*(m|l)(?:ice|ouse))$/, 'ice'],
  [/(\w*(pe)(?:rson|ople))$/, 'ople'],
  [/(\w*(child))(?:ren)?$/, 'ren'],
  [/(\w*eaux)$/, ''],
];

/** Inflector's `to_plural` (src/string/pluralize). */
export function toPlural(word: string): string {
  if (UNCOUNTABLE_WORDS.has(word)) return word;
  const special = SPECIAL_PLURALS.get(word);
  if (special !== undefined) return special;
  for (let i = PLURAL_RULES.length - 1; i >= 0; i--) {
    const [rule, replacement] = PLURAL_RULES[i]!;
    const match = rule.exec(word);
    if (match) return match[1]! + replacement;
  }
  return `${word}s`;
}

const isAlphanumeric = (c: string) => /^[\p{Alphabetic}\p{N}]$/u.test(c);
const isNumeric = (c: string) => /^\p{N}$/u.test(c);
const isLowercase = (c: string) => /^\p{Lowercase}$/u.test(c);
const isUppercase = (c: string) => /^\p{Uppercase}$/u.test(c);
const asciiUpper = (c: string) => (c >= 'a' && c <= 'z' ? c.toUpperCase() : c);
const asciiLower = (c: string) => (c >= 'A' && c <= 'Z' ? c.toLowerCase() : c);

/**
 * Inflector's `to_camel_case` (src/cases/case `to_case_camel_like` with camel case's options).
 * Separators (anything not alphanumeric) and digits start a new word, as does an upper-case letter
 * after a lower-case one; but the letter a word starts with is not remembered as the last one seen,
 * so runs of capitals are lowered (`ERC20Token` → `erc20Token`) while `aBC` stays `aBC`.
 */
export function toCamelCase(text: string): string {
  let newWord = false;
  let lastChar = ' ';
  let foundRealChar = false;
  let result = '';
  const trimmed = [...text];
  while (trimmed.length > 0 && !isAlphanumeric(trimmed.at(-1)!)) trimmed.pop();
  for (const c of trimmed) {
    if (!isAlphanumeric(c)) {
      if (foundRealChar) newWord = true;
      continue;
    }
    foundRealChar = true;
    if (isNumeric(c)) {
      newWord = true;
      result += c;
    } else if (newWord || (isLowercase(lastChar) && isUppercase(c))) {
      newWord = false;
      result += asciiUpper(c);
    } else {
      lastChar = c;
      result += asciiLower(c);
    }
  }
  return result;
}

/**
 * graph-node's query field names for an entity type or interface: `fund` and `funds` for `Fund`;
 * when the plural is the singular, the collection is `<singular>_collection`.
 */
export function queryFieldNames(typeName: string): { singular: string; plural: string } {
  const singular = toCamelCase(typeName);
  const plural = toCamelCase(toPlural(typeName));
  return { singular, plural: plural === singular ? `${plural}_collection` : plural };
}
