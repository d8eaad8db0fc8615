// Where Yoga reports a client's mistake on /graphql outside its error masking, or in words that
// do not say what to fix, this plugin hands it to the taxonomy (errors.ts) as BAD_INPUT instead.
import { buildExecutionContext } from 'graphql/execution/execute.js';
import { getOperationAST, GraphQLError, type GraphQLSchema } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { badRequest, classifyGraphQLError, persistedQueryNotSupported } from './errors.ts';

/** the answer to a request that names a persisted query instead of sending the document */
const PERSISTED_QUERY_REFUSED =
  'Persisted queries (extensions.persistedQuery) are not supported: send the query text itself, as "query" in the JSON body of a POST or as the query parameter of a GET.';

export function useRequestErrors(schema: GraphQLSchema): Plugin {
  return {
    // Yoga's parsers fail on a body that is not JSON with the JSON parser's error attached, and on
    // GET variables that are not JSON with a bare SyntaxError, answered as INTERNAL.
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (!requestParser) return; // no parser for this content type: Yoga answers 415
      const parse = requestParser;
      const parseOrRefuse = async (req: Request) => {
        try {
          return await parse(req);
        } catch {
          throw request.method === 'GET'
            ? badRequest(
                'The variables and extensions parameters must be JSON objects such as variables={"slug":"x"}.',
              )
            : badRequest(
                'The request body must be a JSON object such as {"query": "{ protocol { name } }"}.',
              );
        }
      };
      // the same contract as Yoga's parser: one request's parameters, or a batch's (refused later)
      setRequestParser(parseOrRefuse as typeof parse);
    },
    // Yoga reads no persisted query (extensions.persistedQuery, sent by Apollo clients in place of
    // the document) and would answer its absence with "Must provide query string.", which says
    // neither why nor what to send instead, nor tells an Apollo client to send the text. A query
    // sent beside the extension is run as it is.
    onParams({ params }) {
      const extensions: unknown = params.extensions;
      if (!params.query && typeof extensions === 'object' && extensions && 'persistedQuery' in extensions)
        throw persistedQueryNotSupported(PERSISTED_QUERY_REFUSED);
    },
    // Yoga refuses a document without the operation to run before graphql-js can say which
    // (unknown name, several without a name), in words that name neither: graphql-js's instead.
    // A mutation or subscription is refused as what it is: the schema has neither type, so no
    // method could run it (Yoga would tell a GET to use POST, which fails in turn).
    onParse({ context }) {
      return ({ result, replaceParseResult }) => {
        if (result instanceof Error) return;
        const operationName = context.params?.operationName;
        const operation = getOperationAST(result, operationName);
        if (operation?.operation === 'query') return;
        if (operation) {
          // a GraphQL error like graphql-js's own, which the masking answers as BAD_INPUT and 400
          const readOnly = `This API is read-only: its schema has no ${operation.operation} type, only queries.`;
          replaceParseResult(new GraphQLError(readOnly, { nodes: operation }));
          return;
        }
        // with no operation to run, graphql-js stops at choosing it: no variable is read, nothing runs
        const refused = buildExecutionContext({ schema, document: result, operationName });
        if (Array.isArray(refused) && refused[0]) replaceParseResult(refused[0]);
      };
    },
    // graphql-js's validation errors are returned, not thrown, so Yoga's masking never sees them;
    // the errors it did mask are already ours and come back unchanged.
    onExecutionResult({ result, setResult }) {
      if (!result || isAsyncIterable(result) || Array.isArray(result) || !result.errors?.length) return;
      setResult({ ...result, errors: result.errors.map((error) => classifyGraphQLError(error)) });
    },
  };
}
