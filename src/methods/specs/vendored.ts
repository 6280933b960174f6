import { methodSchemas } from '../schemas/method-schemas.ts';
import type { DeclaredSpec } from '../method-spec.ts';

/** A spec whose schema is the vendored (or hand-written) one of the same name (src/methods/schemas/). */
export function vendored(name: string, rest: Omit<DeclaredSpec, 'name' | 'schema'>): DeclaredSpec {
  const schema = methodSchemas[name];
  if (!schema) throw new Error(`no schema for method ${name}`);
  return { name, schema, ...rest };
}
