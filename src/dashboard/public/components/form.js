// @ts-check
// A form of labelled fields with the behaviour every form of the dashboard needs: checks in the page
// name every problem at once, next to its field; while the request runs the submit button is disabled and
// aria-busy (logins take seconds: users clicked twice); the server's error goes next to the field it names, in
// human words, and the focus goes to that field; other errors appear beside the button, not at the top of the page.
import { ApiFailure } from '../lib/api.js';
import { h, lines, uid } from '../lib/dom.js';
import { fieldOf, human } from '../lib/messages.js';

/**
 * @typedef {object} FieldSpec
 * @property {string} name the API's field name: the server's `error.field` for it lands here
 * @property {string} label
 * @property {'text' | 'email' | 'password' | 'number' | 'url' | 'date' | 'textarea' | 'list' | 'select' | 'checkbox' | 'checkboxes'} [type]
 *   list: a textarea of one value per line (the value is an array)
 * @property {string} [id] the input's id (tests and labels); made up when absent
 * @property {string} [hint] help under the label, tied to the input by aria-describedby
 * @property {boolean} [required]
 * @property {string | number | boolean | string[] | null} [value]
 * @property {Array<{ value: string, label: string, hint?: string }>} [options] of select and checkboxes
 * @property {string} [autocomplete]
 * @property {string} [placeholder]
 * @property {Record<string, string | number>} [attrs] more attributes of the input (min, max, maxlength…)
 * @property {(value: any, values: Record<string, any>) => string | undefined} [check] a problem in words, or undefined
 * @property {(values: Record<string, any>) => boolean} [shown] whether the field applies (re-evaluated on every change)
 * @property {(value: any) => string} [explain] what the chosen value means, shown under the input (a key type, a webhook kind)
 */

/**
 * @typedef {object} Field
 * @property {FieldSpec} spec
 * @property {HTMLElement} wrap
 * @property {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} input the first input (focused on an error)
 * @property {HTMLInputElement[]} boxes the checkboxes of a `checkboxes` field
 * @property {HTMLElement} error
 * @property {HTMLElement | null} explained the explanation of the chosen value
 */

/**
 * @typedef {object} FormOptions
 * @property {string} [id]
 * @property {string} [title] a heading inside the form
 * @property {FieldSpec[]} fields
 * @property {string} submit the submit button's label
 * @property {string} [submitId]
 * @property {string} [busyLabel] the button's label while busy (default: the label with "…")
 * @property {'danger' | ''} [tone]
 * @property {() => void} [cancel] a Cancel button beside the submit
 * @property {(values: Record<string, any>, form: Form) => Promise<string | void>} onSubmit what it returns is shown as done
 * @property {boolean} [keepValues] leave the inputs as they are after success (default: password inputs are cleared)
 */

/** Element of a field. @param {FieldSpec} spec @param {string} id @param {string} describedBy */
function control(spec, id, describedBy) {
  const common = { id, name: spec.name, 'aria-describedby': describedBy, required: spec.required, autocomplete: spec.autocomplete, placeholder: spec.placeholder, ...spec.attrs };
  const t = spec.type ?? 'text';
  if (t === 'textarea' || t === 'list') {
    const value = Array.isArray(spec.value) ? spec.value.join('\n') : spec.value;
    return h('textarea', { ...common, rows: 3 }, value === null || value === undefined ? '' : String(value));
  }
  if (t === 'select') {
    return h('select', common, ...(spec.options ?? []).map((o) => h('option', { value: o.value, selected: String(spec.value ?? '') === o.value }, o.label)));
  }
  if (t === 'checkbox') return h('input', { ...common, type: 'checkbox', checked: Boolean(spec.value) });
  return h('input', { ...common, type: t, value: spec.value === null || spec.value === undefined ? undefined : String(spec.value) });
}

/** @param {FieldSpec} spec @returns {Field} */
function makeField(spec) {
  const id = spec.id ?? uid(`f-${spec.name.replace(/\W/g, '-')}`);
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const error = h('p', { class: 'field-error', id: errorId, hidden: true });
  const hint = spec.hint ? h('p', { class: 'hint', id: hintId }, spec.hint) : null;
  const explainId = `${id}-explained`;
  const describedBy = [spec.hint ? hintId : '', spec.explain ? explainId : '', errorId].filter(Boolean).join(' ');
  if (spec.type === 'checkboxes') {
    const chosen = Array.isArray(spec.value) ? spec.value : [];
    const boxes = (spec.options ?? []).map((o) => h('input', { type: 'checkbox', id: `${id}-${o.value}`, value: o.value, checked: chosen.includes(o.value), 'aria-describedby': errorId }));
    const wrap = h('fieldset', { class: 'field checks', id, 'aria-describedby': describedBy },
      h('legend', {}, spec.label), hint,
      ...boxes.map((b, i) => {
        const o = (spec.options ?? [])[i];
        return h('label', { class: 'check' }, b, ' ', o.label, o.hint ? h('span', { class: 'hint' }, ` — ${o.hint}`) : null);
      }), error);
    return { spec, wrap, input: boxes[0], boxes, error, explained: null };
  }
  const input = control(spec, id, describedBy);
  if (spec.type === 'checkbox') {
    return { spec, wrap: h('div', { class: 'field' }, h('label', { class: 'check', for: id }, input, ' ', spec.label), hint, error), input, boxes: [], error, explained: null };
  }
  const label = h('label', { for: id }, spec.label, spec.required ? h('span', { class: 'req', 'aria-hidden': 'true' }, ' *') : null);
  const explained = spec.explain ? h('p', { class: 'explained', id: explainId, 'aria-live': 'polite' }) : null;
  return { spec, wrap: h('div', { class: 'field' }, label, hint, input, explained, error), input, boxes: [], error, explained };
}

/** The value of a field as the API wants it. @param {Field} f */
function valueOf(f) {
  const t = f.spec.type ?? 'text';
  if (t === 'checkboxes') return f.boxes.filter((b) => b.checked).map((b) => b.value);
  if (t === 'checkbox') return /** @type {HTMLInputElement} */ (f.input).checked;
  if (t === 'list') return lines(f.input.value);
  if (t === 'number') return f.input.value === '' ? undefined : Number(f.input.value);
  return f.input.value;
}

export class Form {
  /** @param {FormOptions} opts */
  constructor(opts) {
    this.opts = opts;
    /** @type {Map<string, Field>} */
    this.fields = new Map(opts.fields.map((s) => [s.name, makeField(s)]));
    this.button = h('button', { type: 'submit', id: opts.submitId, class: opts.tone ?? '' }, opts.submit);
    this.status = h('p', { class: 'form-status', role: 'status' });
    this.problem = h('p', { class: 'form-error', role: 'alert', hidden: true });
    this.busy = false;
    this.el = h('form', { id: opts.id, novalidate: true, class: 'form' },
      opts.title ? h('h2', {}, opts.title) : null,
      ...[...this.fields.values()].map((f) => f.wrap),
      h('div', { class: 'actions' }, this.button,
        opts.cancel ? h('button', { type: 'button', class: 'secondary', onclick: () => opts.cancel?.() }, 'Cancel') : null),
      this.problem, this.status);
    this.el.addEventListener('submit', (ev) => { ev.preventDefault(); void this.run(); });
    this.el.addEventListener('input', () => { this.status.textContent = ''; this.applyShown(); });
    this.el.addEventListener('change', () => this.applyShown());
    this.applyShown();
  }

  /** @returns {Record<string, any>} */
  values() {
    return Object.fromEntries([...this.fields].map(([name, f]) => [name, valueOf(f)]));
  }

  /** @param {string} name */
  field(name) {
    return /** @type {Field} */ (this.fields.get(name));
  }

  applyShown() {
    const values = this.values();
    for (const f of this.fields.values()) {
      if (f.spec.shown) f.wrap.hidden = !f.spec.shown(values);
      if (f.explained && f.spec.explain) f.explained.textContent = f.spec.explain(values[f.spec.name]);
    }
  }

  /** Shows `message` next to the field `name` (or beside the button when no field has that name). @param {string | undefined} name @param {string} message */
  setError(name, message) {
    const f = name === undefined ? undefined : this.resolve(name);
    if (!f) {
      this.problem.textContent = human(message, name);
      this.problem.hidden = false;
      return undefined;
    }
    f.error.textContent = human(message, name);
    f.error.hidden = false;
    for (const i of f.boxes.length ? f.boxes : [f.input]) i.setAttribute('aria-invalid', 'true');
    return f;
  }

  /**
   * The shown field a server's field path names: itself, a field named `<path>@<variant>` (one kind's options),
   * the first field under it (`options` → `options.addresses…`), or the field above it (`ipAllowlist[2]` → `ipAllowlist`).
   * @param {string} name
   */
  resolve(name) {
    const n = fieldOf(name);
    const shown = [...this.fields.values()].filter((f) => !f.wrap.hidden);
    return shown.find((f) => f.spec.name === n) ?? shown.find((f) => f.spec.name.split('@')[0] === n)
      ?? shown.find((f) => f.spec.name.startsWith(`${n}.`)) ?? shown.find((f) => f.spec.name === n.split('.')[0]);
  }

  /** Every field back to the value it was made with (a form that made something is ready for the next one). */
  reset() {
    for (const f of this.fields.values()) {
      const v = f.spec.value;
      if (f.boxes.length) for (const b of f.boxes) b.checked = Array.isArray(v) && v.includes(b.value);
      else if (f.spec.type === 'checkbox') /** @type {HTMLInputElement} */ (f.input).checked = Boolean(v);
      else f.input.value = v === null || v === undefined ? '' : Array.isArray(v) ? v.join('\n') : String(v);
    }
    this.clearErrors();
    this.applyShown();
  }

  clearErrors() {
    this.problem.hidden = true;
    this.problem.textContent = '';
    for (const f of this.fields.values()) {
      f.error.hidden = true;
      f.error.textContent = '';
      for (const i of f.boxes.length ? f.boxes : [f.input]) i.removeAttribute('aria-invalid');
    }
  }

  /** @param {boolean} on */
  setBusy(on) {
    this.busy = on;
    this.button.disabled = on;
    this.button.setAttribute('aria-busy', String(on));
    this.el.setAttribute('aria-busy', String(on));
    this.button.textContent = on ? this.opts.busyLabel ?? `${this.opts.submit}…` : this.opts.submit;
  }

  async run() {
    if (this.busy) return;
    this.clearErrors();
    this.status.textContent = '';
    const values = this.values();
    // Every problem the page can see, named at once (the server names only the first).
    /** @type {Field | undefined} */
    let first;
    for (const f of this.fields.values()) {
      if (f.wrap.hidden) continue;
      const v = values[f.spec.name];
      const empty = v === undefined || v === '' || (Array.isArray(v) && v.length === 0);
      const problem = f.spec.required && empty ? 'This is required.' : f.spec.check?.(v, values);
      if (!problem) continue;
      const shown = this.setError(f.spec.name, problem);
      first ??= shown;
    }
    if (first) { first.input.focus(); return; }
    if (!this.problem.hidden) return;
    this.setBusy(true);
    try {
      const done = await this.opts.onSubmit(values, this);
      if (done) this.status.textContent = done;
      if (!this.opts.keepValues) for (const f of this.fields.values()) if (f.spec.type === 'password') f.input.value = '';
    } catch (err) {
      this.fail(err);
    } finally {
      this.setBusy(false);
    }
  }

  /** Shows a failure: next to its field when the server named one this form has. @param {unknown} err */
  fail(err) {
    const e = err instanceof ApiFailure ? err : new ApiFailure(0, { error: { message: err instanceof Error ? err.message : String(err) } });
    const f = this.setError(e.field, e.missingRoute ? 'This server does not offer this yet (it needs a newer Nodegate).' : e.message);
    if (f) f.input.focus();
    else this.problem.focus?.();
  }
}
