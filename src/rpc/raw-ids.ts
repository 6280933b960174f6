import { stringEnd } from '../json/string-end.ts';

/**
 * The JSON text of each request object's numeric `id`, read from the body without parsing it again
 * (re-reading a whole body losslessly cost ~300 ms per MiB for one compute unit). One forward pass over text that
 * JSON.parse has already accepted: strings are skipped with indexOf, nothing recurses, nothing but the ids is
 * allocated. `batch`: the body is an array and its elements are the request objects; else it is one object.
 * An element whose last `id` member is not a number gets undefined (duplicate keys: the last wins, as JSON.parse).
 */
export function rawNumericIds(text: string, batch: boolean): Array<string | undefined> {
  const ids: Array<string | undefined> = [];
  const memberDepth = batch ? 2 : 1; // depth inside a request object's braces
  let depth = 0;
  let item = 0;
  let expectKey = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const end = stringEnd(text, i);
      if (depth === memberDepth && expectKey) {
        expectKey = false;
        const key = text.slice(i + 1, end - 1);
        if (key === 'id' || (key.includes('\\') && JSON.parse(text.slice(i, end)) === 'id')) {
          let j = end;
          while (j < n && text.charCodeAt(j) !== 0x3a /* : */) j++;
          j++;
          while (j < n && isSpace(text.charCodeAt(j))) j++;
          let k = j;
          while (k < n && isNumberChar(text.charCodeAt(k))) k++;
          ids[item] = k > j ? text.slice(j, k) : undefined;
          i = Math.max(k, j) - 1;
          continue;
        }
      }
      i = end - 1;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth++;
      if (depth === memberDepth && c === 0x7b) expectKey = true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    } else if (c === 0x2c /* , */) {
      if (depth === memberDepth) expectKey = true;
      else if (batch && depth === 1) item++;
    }
  }
  return ids;
}


const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
/** Characters of a JSON number: digits, sign, point, exponent. */
const isNumberChar = (c: number) => (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
