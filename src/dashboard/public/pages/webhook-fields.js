// @ts-check
// The create form's fields: every kind the gateway has (from the facts), the network where the kind needs one, and
// each kind's options, checked in the page with the rule the facts give (an address is 0x and 40 hex digits).
/** @typedef {import('../components/form.js').FieldSpec} FieldSpec */

/**
 * @param {import('../lib/types.js').Facts} facts
 * @param {import('../lib/types.js').Endpoint[]} networks
 * @returns {FieldSpec[]}
 */
export function webhookFields(facts, networks) {
  const kinds = facts.webhookKinds;
  const kindOf = (/** @type {string} */ name) => kinds.find((k) => k.name === name);
  /** @type {FieldSpec[]} */
  const options = kinds.flatMap((k) => k.options.map((o) => /** @type {FieldSpec} */ ({
    name: `options.${o.name}@${k.name}`, label: o.label, type: o.list ? 'list' : 'text', id: `hook-${k.name.replace('.', '-')}-${o.name}`,
    hint: o.help, required: o.required, shown: (v) => v.kind === k.name,
    check: (value) => {
      const re = new RegExp(o.pattern);
      const bad = (o.list ? /** @type {string[]} */ (value) : value ? [value] : []).filter((x) => !re.test(x));
      return bad.length ? `${bad.join(', ')}: ${o.problem}.` : undefined;
    },
  })));
  return [
    { name: 'kind', label: 'Kind', type: 'select', id: 'hook-kind', value: kinds[0]?.name, options: kinds.map((k) => ({ value: k.name, label: k.name })), explain: (v) => kindOf(v)?.help ?? '' },
    { name: 'network', label: 'Network', type: 'select', id: 'hook-network', options: networks.map((n) => ({ value: n.name, label: n.name })), shown: (v) => kindOf(v.kind)?.needsNetwork ?? true },
    { name: 'url', label: 'Target URL', type: 'url', id: 'hook-url', required: true, placeholder: 'https://hooks.example.com/nodegate', hint: 'Events are POSTed here as JSON, signed with the webhook’s secret.' },
    ...options,
  ];
}

/**
 * The API's body from the form's values: only the chosen kind's options.
 * @param {Record<string, any>} v
 * @param {import('../lib/types.js').Facts} facts
 */
export function webhookBody(v, facts) {
  const kind = facts.webhookKinds.find((k) => k.name === v.kind);
  /** @type {Record<string, unknown>} */
  const options = {};
  for (const o of kind?.options ?? []) {
    const value = v[`options.${o.name}@${kind?.name}`];
    if (o.list ? value.length > 0 : value) options[o.name] = value;
  }
  return { kind: v.kind, url: v.url.trim(), options, ...(kind?.needsNetwork === false ? {} : { network: v.network }) };
}
