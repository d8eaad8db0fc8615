// parseContentPath against graph-node's ContentPath (graph/src/ipfs/content_path.rs): every spelling
// it accepts reduces to one canonical `<cid>[/<path>]`, and each refusal says why; and the sources
// of Arweave file data sources.
import { describe, expect, it } from 'vitest';
import {
  InvalidContentPathError,
  parseArweaveSource,
  parseContentPath,
} from '../../../indexer/runtime/content-path.ts';

const CID_V0 = 'QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn';
const CID_V1 = 'bafybeiczsscdsbs7ffqz55asqdf3smv6klcw3gofszvwlyarci47bgf354';
// the same CIDv1 in other multibases
const CID_V1_BASE36 = 'k2jmtxtlhjl3fhmgndf92e48by79ryjuvqp3y2qgehpao6v3lurvnmcv';
const CID_V1_BASE16 = 'f0170122059948439065f29619ef41280cbb932be52c56d99c5966b65e0111239f098bbef';
const CID_V1_BASE58 = 'zdj7WbTaiJT1fgatdet9Ei9iDB5hdCxkbVyhyh8YTUnXMiwYi';
// raw CIDv1 over a sha1 multihash (0x11), which graph-node refuses to fetch
const CID_SHA1 = 'bafkrcfaha4dqobyha4dqobyha4dqobyha4dqoby';

function refusal(input: string): InvalidContentPathError {
  try {
    parseContentPath(input);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidContentPathError);
    return error as InvalidContentPathError;
  }
  throw new Error(`'${input}' was accepted`);
}

describe('parseContentPath', () => {
  it('keeps a CIDv0 in its base58 form', () => {
    expect(parseContentPath(CID_V0)).toBe(CID_V0);
  });

  it('keeps a CIDv1 in base32', () => {
    expect(parseContentPath(CID_V1)).toBe(CID_V1);
  });

  it('re-encodes a CIDv1 given in base36, base16 or base58btc in base32', () => {
    expect(parseContentPath(CID_V1_BASE36)).toBe(CID_V1);
    expect(parseContentPath(CID_V1_BASE16)).toBe(CID_V1);
    expect(parseContentPath(CID_V1_BASE58)).toBe(CID_V1);
  });

  it('keeps the path after the CID', () => {
    expect(parseContentPath(`${CID_V0}/readme.md`)).toBe(`${CID_V0}/readme.md`);
    expect(parseContentPath(`${CID_V1_BASE36}/docs/readme.md`)).toBe(`${CID_V1}/docs/readme.md`);
  });

  it('trims whitespace and leading and trailing slashes', () => {
    expect(parseContentPath(`  ///${CID_V0}///  `)).toBe(CID_V0);
    expect(parseContentPath(`\n/${CID_V1}/readme.md/\t`)).toBe(`${CID_V1}/readme.md`);
  });

  it('drops a /ipfs/ prefix', () => {
    expect(parseContentPath(`/ipfs/${CID_V0}`)).toBe(CID_V0);
    expect(parseContentPath(`/ipfs/${CID_V1}/readme.md`)).toBe(`${CID_V1}/readme.md`);
  });

  it('drops an ipfs:// scheme', () => {
    expect(parseContentPath(`ipfs://${CID_V0}`)).toBe(CID_V0);
    expect(parseContentPath(`ipfs://${CID_V1_BASE36}/readme.md`)).toBe(`${CID_V1}/readme.md`);
  });

  it('takes the content path from a gateway URL', () => {
    expect(parseContentPath(`http://ipfs.io/ipfs/${CID_V0}`)).toBe(CID_V0);
    expect(parseContentPath(`https://gw.example/prefix/ipfs/${CID_V1}/readme.md`)).toBe(
      `${CID_V1}/readme.md`,
    );
  });

  it('takes the content path from an RPC cat URL’s arg', () => {
    expect(parseContentPath(`http://127.0.0.1:5001/api/v0/cat?arg=${CID_V0}`)).toBe(CID_V0);
    expect(parseContentPath(`https://rpc.example/api/v0/cat?arg=/ipfs/${CID_V1}/readme.md`)).toBe(
      `${CID_V1}/readme.md`,
    );
  });

  it('takes the content path from the path of any other http URL', () => {
    expect(parseContentPath(`https://ipfs.example/${CID_V0}/readme.md`)).toBe(`${CID_V0}/readme.md`);
  });

  it('refuses an empty input', () => {
    expect(refusal('').message).toBe("'' is not a valid IPFS content path: content path is empty");
    expect(refusal('  \n ').message).toBe("'' is not a valid IPFS content path: content path is empty");
    expect(refusal('///').message).toBe("'///' is not a valid IPFS content path: content path is empty");
  });

  it('refuses an invalid CID, naming the input', () => {
    const error = refusal('not_a_cid/readme.md');
    expect(error.message).toMatch(/^'not_a_cid\/readme.md' is not a valid IPFS content path: invalid CID: ./);
    expect(error.input).toBe('not_a_cid/readme.md');
    // a digest shorter than its multihash says
    expect(refusal(CID_V0.slice(0, -2)).message).toMatch(/is not a valid IPFS content path: invalid CID: ./);
  });

  it('refuses query parameters in the path', () => {
    expect(refusal(`${CID_V0}/readme.md?offline=true`).message).toBe(
      `'${CID_V0}/readme.md?offline=true' is not a valid IPFS content path: query parameters not allowed`,
    );
  });

  it('refuses a CID whose multihash is not collision resistant', () => {
    expect(refusal(CID_SHA1).message).toBe(
      `'${CID_SHA1}' is not a valid IPFS content path: CID multihash 17 is not allowed`,
    );
  });

  it('refuses an http input that is not a URL', () => {
    expect(refusal('http://').message).toBe(
      "'http://' is not a valid IPFS content path: input is not a valid URL",
    );
  });
});

describe('Arweave sources', () => {
  const id = 'n1RkW2xJ3t0sZ9b1Xq7yC4mE5vA6uI8oP2lK3jH4gF5';

  it('are a transaction id, with a path inside it if any, kept as given', () => {
    expect(parseArweaveSource(id)).toBe(id);
    expect(parseArweaveSource(` ${id}/meta/1.json `)).toBe(`${id}/meta/1.json`);
  });

  it('refuse what would leave the gateway or reach it as a query', () => {
    for (const source of ['https://evil.example/x', `/${id}`, `${id}/../admin`, `${id}?x=1`, ''])
      expect(() => parseArweaveSource(source)).toThrow(
        `'${source}' is not an Arweave file: a transaction id (base64url) is expected, with a path inside it if any`,
      );
  });
});
