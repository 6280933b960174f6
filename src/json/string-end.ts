/**
 * Index just past the closing quote of the JSON string that opens at `start` (or the text's end when it never
 * closes). For scanners that walk JSON text without parsing it (a request's raw ids, an answer's nesting depth):
 * a quote preceded by an odd number of backslashes is escaped and does not close the string.
 */
export function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(q - 1 - backslashes) === 0x5c /* \ */) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
    from = q + 1;
  }
}
