// Node 20 has no fs.globSync (added in Node 22); conformance 0.2.0-alpha imports it (only its
// tier-check command calls it). Imports of `fs` made by the conformance package get a copy of
// node:fs with a small globSync added; everything else resolves as usual.
const PATCHED_FS = new URL('./fs-with-globsync.mjs', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  const fromConformance = context.parentURL?.includes('/@modelcontextprotocol/conformance/') ?? false;
  if (fromConformance && (specifier === 'fs' || specifier === 'node:fs')) {
    return { url: PATCHED_FS, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
