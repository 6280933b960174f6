// @ts-check
// The fields of a key (create form and the allowlists editor), from the facts: types with what they mean, the
// permissions, the networks this gateway serves.
import { capital } from '../lib/facts.js';

/** @typedef {import('../components/form.js').FieldSpec} FieldSpec */

/** A value of an IP allowlist the page can tell is wrong (the server checks fully). @param {string[]} list */
const ipProblem = (list) => {
  const bad = list.filter((s) => !/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(s));
  return bad.length ? `Not an IP address or CIDR: ${bad.join(', ')}. Use forms like 203.0.113.7, 10.0.0.0/8 or 2001:db8::/32.` : undefined;
};
/** @param {string[]} list */
const originProblem = (list) => {
  const bad = list.filter((s) => !/^https?:\/\/[^/\s]+$/.test(s));
  return bad.length ? `Not an origin: ${bad.join(', ')}. An origin is a scheme and host, like https://app.example (no path).` : undefined;
};

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
    { name: 'expiresAt', label: 'Expires (optional)', type: 'date', id: 'key-expires', hint: 'At the end of that day (UTC). Empty: never.' },
  ];
}
