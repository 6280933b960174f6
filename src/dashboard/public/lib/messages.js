// @ts-check
// The API's validation wording made human. The server names the field (`error.field`) and writes messages as
// "field: what is wrong"; a schema failure's "what is wrong" is the validator's (ajv) wording, which is not for
// people ("must NOT have fewer than 1 characters"). Shown next to the field, the field's name is the label already.

/** @type {Array<[RegExp, (m: RegExpMatchArray) => string]>} */
const WORDING = [
  [/^must NOT have fewer than 1 characters?$/i, () => 'This is required.'],
  [/^must NOT have fewer than (\d+) characters$/i, (m) => `Use at least ${m[1]} characters.`],
  [/^must NOT have more than (\d+) characters$/i, (m) => `Use at most ${m[1]} characters.`],
  [/^must NOT have fewer than 1 items$/i, () => 'Choose at least one.'],
  [/^must NOT have fewer than (\d+) items$/i, (m) => `Give at least ${m[1]}.`],
  [/^must NOT have more than (\d+) items$/i, (m) => `Give at most ${m[1]}.`],
  [/^must match format "email"$/i, () => 'Enter an email address, like name@example.com.'],
  [/^must match format "date-time"$/i, () => 'Enter a date and time.'],
  [/^must match format "uri"$/i, () => 'Enter a full URL, like https://hooks.example.com/nodegate.'],
  [/^must be integer$/i, () => 'Enter a whole number.'],
  [/^must be number$/i, () => 'Enter a number.'],
  [/^must be string$/i, () => 'Enter text.'],
  [/^must be boolean$/i, () => 'Choose yes or no.'],
  [/^must be >= (\S+)$/i, (m) => `Enter ${m[1]} or more.`],
  [/^must be <= (\S+)$/i, (m) => `Enter ${m[1]} or less.`],
  [/^must be > (\S+)$/i, (m) => `Enter more than ${m[1]}.`],
  [/^must match pattern .*$/i, () => 'This is not in the expected form.'],
  [/^is required$/i, () => 'This is required.'],
  [/^is not a known field$/i, () => 'This field is not accepted here.'],
  [/^must be equal to one of the allowed values$/i, () => 'Choose one of the offered values.'],
];

/** The first letter in capitals, a full stop at the end. @param {string} s */
const sentence = (s) => {
  const t = s.trim();
  if (!t) return t;
  const c = t[0].toUpperCase() + t.slice(1);
  return /[.!?]$/.test(c) ? c : `${c}.`;
};

/**
 * The message to show next to `field`: its "field: " prefix dropped (the label says it), validator wording replaced.
 * @param {string} message
 * @param {string} [field]
 */
export function human(message, field) {
  let m = message;
  if (field) {
    const prefixes = [`${field}: `, `${field} `];
    for (const p of prefixes) if (m.startsWith(p) && p.endsWith(': ')) m = m.slice(p.length);
  }
  for (const [re, say] of WORDING) {
    const hit = m.match(re);
    if (hit) return say(hit);
  }
  return sentence(m);
}

/**
 * The form field a server's field path belongs to: `ipAllowlist[2]` → `ipAllowlist`, `options.addresses[0]` → `options.addresses`.
 * @param {string} path
 */
export const fieldOf = (path) => path.replace(/\[\d+\]$/, '').replace(/\[\d+\]/g, '');
