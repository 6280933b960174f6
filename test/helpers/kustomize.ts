import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** A Kubernetes object as rendered: its kind, name and the rest. */
export interface Manifest { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; [k: string]: any }

/** What deploy/kubernetes uses of kustomize; a kustomization with anything else is refused, never half-rendered. */
const KNOWN = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'images', 'patches']);
/** Kinds without a namespace, among those the manifests hold. */
const CLUSTER_SCOPED = new Set(['Namespace']);

/**
 * Renders a kustomization as `kubectl kustomize DIR` does, for the subset deploy/kubernetes uses: `resources` (files
 * and folders), `namespace`, `images` (newName, newTag) and `patches` by `path` (strategic merge: maps merged, lists
 * of named items merged by `name`, other lists replaced). No npm package renders kustomize; this one is small
 * because the manifests keep to plain overlays.
 */
export function kustomize(dir: string): Manifest[] {
  const k = readYaml(join(dir, 'kustomization.yaml'))[0] as Record<string, any>;
  const unknown = Object.keys(k).filter((key) => !KNOWN.has(key));
  if (unknown.length) throw new Error(`${dir}/kustomization.yaml: ${unknown.join(', ')} is not rendered by test/helpers/kustomize.ts`);
  const docs: Manifest[] = (k.resources ?? []).flatMap((r: string) => {
    const p = join(dir, r);
    return statSync(p).isDirectory() ? kustomize(p) : readYaml(p);
  });
  for (const { path, ...rest } of k.patches ?? []) {
    if (Object.keys(rest).length) throw new Error(`${dir}: patches with ${Object.keys(rest).join(', ')} are not rendered`);
    for (const patch of readYaml(join(dir, path)) as Manifest[]) {
      const i = docs.findIndex((d) => d.kind === patch.kind && d.metadata.name === patch.metadata.name);
      if (i < 0) throw new Error(`${dir}/${path}: no ${patch.kind} ${patch.metadata.name} to patch`);
      docs[i] = merge(docs[i], patch) as Manifest;
    }
  }
  for (const image of k.images ?? []) {
    for (const d of docs) {
      for (const c of [...d.spec?.template?.spec?.containers ?? [], ...d.spec?.template?.spec?.initContainers ?? []]) {
        const [name, tag] = String(c.image).split(':');
        if (name === image.name) c.image = `${image.newName ?? name}:${image.newTag ?? tag ?? 'latest'}`;
      }
    }
  }
  if (k.namespace) for (const d of docs) if (!CLUSTER_SCOPED.has(d.kind)) d.metadata.namespace = k.namespace;
  return docs;
}

function readYaml(file: string): unknown[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((d) => {
    if (d.errors.length) throw new Error(`${file}: ${d.errors[0].message}`);
    return d.toJS();
  }).filter((d) => d !== null);
}

function merge(base: unknown, patch: unknown): unknown {
  if (Array.isArray(base) && Array.isArray(patch) && patch.every((p) => p && typeof p === 'object' && 'name' in p)) {
    const out = base.map((b) => structuredClone(b));
    for (const p of patch) {
      const i = out.findIndex((b) => b?.name === p.name);
      if (i < 0) out.push(p);
      else out[i] = merge(out[i], p);
    }
    return out;
  }
  if (base && patch && typeof base === 'object' && typeof patch === 'object' && !Array.isArray(base) && !Array.isArray(patch)) {
    const out: Record<string, unknown> = { ...base as Record<string, unknown> };
    for (const [key, value] of Object.entries(patch)) out[key] = key in out ? merge(out[key], value) : value;
    return out;
  }
  return patch;
}
