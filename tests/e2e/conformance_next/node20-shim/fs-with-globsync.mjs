// node:fs plus globSync for the one pattern shape the conformance CLI uses: "**/<file name>".
import * as fs from 'node:fs';
import path from 'node:path';

export * from 'node:fs';
export default fs.default ?? fs;

export function globSync(pattern, options = {}) {
  const match = /^\*\*\/([^*?/[\]{}]+)$/.exec(pattern);
  if (!match) throw new Error(`node20 globSync shim: unsupported pattern ${pattern}`);
  const root = options.cwd ?? process.cwd();
  const found = [];
  const walk = (relative) => {
    for (const entry of fs.readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const child = relative ? path.join(relative, entry.name) : entry.name;
      if (entry.isDirectory()) walk(child);
      else if (entry.name === match[1]) found.push(child);
    }
  };
  walk('');
  return found;
}
