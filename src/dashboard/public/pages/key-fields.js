// @ts-check
// The fields of a key (create form and the allowlists editor), from the facts: types with what they mean, the
// permissions, the networks this gateway serves.
import { capital } from '../lib/facts.js';

/** @typedef {import('../components/form.js').FieldSpec} FieldSpec */

/** An IPv4 address: four numbers of 0 to 255. @param {string} s */
const ipv4 = (s) => /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(s) && s.split('.').every((n) => Number(n) <= 255);
/** An address or CIDR: IPv4 with a prefix up to 32, IPv6 (its form left to the server) up to 128. @param {string} s */
const ipOrCidr = (s) => {
  const [addr, prefix, more] = s.split('/');
  if (more !== undefined || (prefix !== undefined && !/^\d{1,3}$/.test(prefix))) return false;
  if (addr.includes(':')) return /^[0-9a-fA-F:.]+$/.test(addr) && (prefix === undefined || Number(prefix) <= 128);
  return ipv4(addr) && (prefix === undefined || Number(prefix) <= 32);
};
/** The values of an IP allowlist the page can tell are wrong, every one named (the server checks fully). @param {string[]} list */
const ipProblem = (list) => {
  const bad = list.filter((s) => !ipOrCidr(s));
  return bad.length ? `Not an IP address or CIDR: ${bad.join(', ')}. Use forms like 203.0.113.7, 10.0.0.0/8 or 2001:db8::/32.` : undefined;
};
/** @param {string[]} list */
const originProblem = (list) => {
  const bad = list.filter((s) => !/^https?:\/\/[^/\s]+$/.test(s));
  return bad.length ? `Not an origin: ${bad.join(', ')}. An origin is a scheme and host, like https://app.example (no path).` : undefined;
};

/** @param {string[]} list */
const addressProblem = (list) => {
  const bad = list.filter((s) => !/^0x[0-9a-fA-F]{40}$/.test(s));
  return bad.length ? `Not a contract address: ${bad.join(', ')}. An address is 0x and 40 hex digits.` : undefined;
};

/** Today's date in UTC, as a date input writes it. */
const today = () => new Date().toISOString().slice(0, 10);

/**
 * A key's rules in a few words for the list, so that two Restricted keys do not look alike: "IPs 10.0.0.0/8 ·
 * networks mainnet", or "none" for a key any caller may use for any call.
 * @param {import('../lib/types.js').ApiKey} k
 */
export function rulesSummary(k) {
  /** @type {Array<[string, string[]]>} */
  const lists = [['IPs', k.ipAllowlist], ['origins', k.originAllowlist], ['networks', k.networkAllowlist], ['methods', k.methodAllowlist],
    ['denied', k.methodDenylist ?? []], ['contracts', k.contractAllowlist ?? []], ['user agents', k.userAgentAllowlist ?? []]];
  const parts = lists.filter(([, l]) => l.length).map(([n, l]) => `${n} ${l.length > 2 ? `${l.slice(0, 2).join(', ')} +${l.length - 2}` : l.join(', ')}`);
  if (k.jwtKeys?.length) parts.push('JWT required');
  if (k.logsMaxBlockRange) parts.push(`eth_getLogs ≤ ${k.logsMaxBlockRange} blocks`);
  return parts.length ? parts.join(' · ') : 'none';
}

/** The fields of a key's rules as the management API names them, lists and the one number. */
export const RULE_FIELDS = ['ipAllowlist', 'originAllowlist', 'networkAllowlist', 'methodAllowlist', 'methodDenylist', 'contractAllowlist', 'userAgentAllowlist', 'jwtAudiences'];

/**
 * The rules of a key as the API takes them from the fields' values: lists as they are, the eth_getLogs range as a
 * number or null (the network's).
 * @param {Record<string, any>} v
 */
export function rulesOf(v) {
  /** @type {Record<string, unknown>} */
  const out = Object.fromEntries(RULE_FIELDS.map((f) => [f, v[f]]));
  out.logsMaxBlockRange = v.logsMaxBlockRange === undefined ? null : v.logsMaxBlockRange;
  return out;
}

/**
 * The allowlist fields, with `key`'s values when editing.
 * @param {import('../lib/types.js').Endpoint[]} networks
 * @param {Partial<import('../lib/types.js').ApiKey>} [key]
 * @param {string} [prefix] of the ids
 * @returns {FieldSpec[]}
 */
export function allowlistFields(networks, key = {}, prefix = 'key') {
  return [
    { name: 'ipAllowlist', label: 'IP allowlist', type: 'list', id: `${prefix}-ips`, value: key.ipAllowlist ?? [], hint: 'One address or CIDR per line. Empty: calls from any address.', placeholder: '203.0.113.7\n10.0.0.0/8', check: ipProblem },
    { name: 'originAllowlist', label: 'Origin allowlist', type: 'list', id: `${prefix}-origins`, value: key.originAllowlist ?? [], hint: 'Browser origins allowed to call with this key, one per line. Empty: any.', placeholder: 'https://app.example', check: originProblem },
    { name: 'networkAllowlist', label: 'Networks', type: 'checkboxes', id: `${prefix}-networks`, value: key.networkAllowlist ?? [], hint: 'None ticked: every network.', options: networks.map((n) => ({ value: n.name, label: n.name })) },
    { name: 'methodAllowlist', label: 'Method allowlist', type: 'list', id: `${prefix}-methods`, value: key.methodAllowlist ?? [], hint: 'One JSON-RPC method per line, like eth_call. Empty: every method the plan allows.', placeholder: 'eth_call\neth_getLogs' },
    { name: 'methodDenylist', label: 'Method denylist', type: 'list', id: `${prefix}-denied`, value: key.methodDenylist ?? [], hint: 'Methods refused for this key, one per line, whatever the allowlist says.', placeholder: 'eth_sendRawTransaction' },
    { name: 'contractAllowlist', label: 'Contract allowlist', type: 'list', id: `${prefix}-contracts`, value: key.contractAllowlist ?? [], hint: 'Contract addresses its calls may name (the to of calls and transactions, the address of log filters), one per line. Empty: any.', placeholder: '0x6b175474e89094c44da98b954eedeac495271d0f', check: addressProblem },
    { name: 'userAgentAllowlist', label: 'User-agent allowlist', type: 'list', id: `${prefix}-agents`, value: key.userAgentAllowlist ?? [], hint: 'Parts of a User-Agent, one per line: a request whose User-Agent contains one of them is allowed (case aside). Empty: any.', placeholder: 'my-dapp/' },
    { name: 'logsMaxBlockRange', label: 'eth_getLogs range (blocks, optional)', type: 'number', id: `${prefix}-logs-range`, value: key.logsMaxBlockRange ?? null, attrs: { min: 1 }, hint: "The most blocks one eth_getLogs may span for this key. Empty: the network's bound." },
    { name: 'jwtAudiences', label: 'JWT audiences', type: 'list', id: `${prefix}-audiences`, value: key.jwtAudiences ?? [], hint: 'When the key requires a JWT: the aud it must carry (one of these). Empty: not checked. Public keys are uploaded with the API or the CLI (nodegate keys update --jwt-key).' },
  ];
}

/**
 * @param {import('../lib/types.js').Facts} facts
 * @param {import('../lib/types.js').Endpoint[]} networks
 * @param {readonly string[]} [offered] the permissions the caller may give (the server refuses others with 403)
 * @returns {FieldSpec[]}
 */
export function keyFields(facts, networks, offered) {
  return [
    { name: 'name', label: 'Name', id: 'key-name', required: true, attrs: { maxlength: 200 }, hint: 'For you, to recognise the key: “production backend”.' },
    { name: 'type', label: 'Type', type: 'select', id: 'key-type', value: 'Standard', options: facts.keyTypes.map((t) => ({ value: t.name, label: t.name })), explain: (v) => facts.keyTypes.find((t) => t.name === v)?.help ?? '' },
    {
      name: 'permissions', label: 'Permissions', type: 'checkboxes', id: 'perm', value: [], shown: (v) => v.type === 'Restricted',
      options: facts.permissions.filter((p) => !offered || offered.includes(p.name)).map((p) => ({ value: p.name, label: p.name, hint: capital(p.help) })),
      check: (v, all) => (all.type === 'Restricted' && v.length === 0 ? 'Choose at least one permission.' : undefined),
    },
    ...allowlistFields(networks),
    {
      name: 'expiresAt', label: 'Expires (optional)', type: 'date', id: 'key-expires', hint: 'At the end of that day (UTC). Empty: never.', attrs: { min: today() },
      check: (v) => (v && v < today() ? 'This day has passed: choose today or later, or leave it empty for a key that does not expire.' : undefined),
    },
  ];
}
