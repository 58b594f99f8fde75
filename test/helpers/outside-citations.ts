// Finds citations of files outside the repository in a set of files (repository path → text): links and imports that
// leave the tree, names of documents that are not in it, and sections (§) of anything but a public standard.
import path from 'node:path';

/** A markdown link's target: `[text](target)`, its title and anchor left off. */
const MD_LINK = /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
/**
 * A relative module specifier: of a static import or export … from (at the start of a statement, so code quoted in
 * a string is not taken for one), of import() or of require().
 */
const IMPORT =
  /(?:^\s*(?:import|export|\})[^'"\n]*?\bfrom\s*|^\s*import\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)['"](\.{1,2}\/[^'"]*)['"]/gm;
/** A document named by its file name, with or without folders (`docs/api.md`, `../README.md`, `SOME.md`). */
const DOC_NAME = /(?<![\w/.-])((?:\.{1,2}\/)*(?:[\w-]+\/)*[\w-]+\.md)\b/g;
/** A section sign and what stands before it on the line. */
const SECTION = /([^\n§]{0,40})§/g;
/** What a § may cite: a public standard by its name, or a document of the tree by its path. */
const PUBLIC_STANDARD = /\b(RFC \d+|UPnP [A-Z]+ [\d.]+|IEC [\d-]+|ISO[ /][\d-]+|POSIX)\b[^§]*$/;
/** Documents outside the repository that code has cited by name alone, without a file name. */
const OUTSIDE_NAMES = /\b(interface[ -]spec|DESIGN|STYLE|INTERFACE-SPEC)\b/;

const TEXT = /\.(ts|mts|js|mjs|cjs|json|jsonc|md|sh|c|h|gyp|html|css|svg|service|conf|txt|yml|yaml)$|(^|\/)[^./]+$/;

/** Whether `file` is one the checker reads (text written by hand, not a lock file). */
export const isCheckedText = (file: string): boolean => TEXT.test(file) && !file.endsWith('package-lock.json');

const lineOf = (text: string, index: number): number => text.slice(0, index).split('\n').length;

/** Every citation of something outside the tree, one line each: `file:line: what, and why it is a finding`. */
export function citationsOutside(files: ReadonlyMap<string, string>): string[] {
  const findings: string[] = [];
  const paths = new Set(files.keys());
  const folders = new Set(
    [...paths].flatMap((p) =>
      p
        .split('/')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
    ),
  );
  const inside = (p: string): boolean => p !== '..' && !p.startsWith('../') && !path.posix.isAbsolute(p);
  const exists = (p: string): boolean => p === '.' || paths.has(p) || folders.has(p);
  for (const [file, text] of files) {
    const dir = path.posix.dirname(file);
    const at = (index: number, message: string) => findings.push(`${file}:${lineOf(text, index)}: ${message}`);
    if (file.endsWith('.md')) {
      for (const m of text.matchAll(MD_LINK)) {
        const target = m[1]!.split('#')[0]!;
        if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const resolved = path.posix.normalize(path.posix.join(dir, target));
        if (!inside(resolved)) at(m.index, `the link ${m[1]} leaves the repository`);
        else if (!exists(resolved)) at(m.index, `the link ${m[1]} names no file of the repository (${resolved})`);
      }
    }
    if (/\.(ts|mts|js|mjs|cjs)$/.test(file)) {
      for (const m of text.matchAll(IMPORT)) {
        const resolved = path.posix.normalize(path.posix.join(dir, m[1]!));
        if (!inside(resolved)) at(m.index, `the import ${m[1]} leaves the repository`);
      }
    }
    for (const m of text.matchAll(DOC_NAME)) {
      const name = m[1]!;
      const relative = path.posix.normalize(path.posix.join(dir, name));
      const found =
        (inside(relative) && paths.has(relative)) ||
        paths.has(path.posix.normalize(name)) ||
        [...paths].some((p) => p === name || p.endsWith(`/${name.replace(/^(\.{1,2}\/)+/, '')}`));
      if (!found)
        at(m.index, `${name} is not a file of the repository: write what it says into one (docs/conventions.md)`);
    }
    for (const m of text.matchAll(SECTION)) {
      const before = m[1]!;
      if (PUBLIC_STANDARD.test(before)) continue;
      if (/[\w./-]+\.md\b[^§]*$/.test(before)) continue; // a document of the tree, checked above
      at(
        m.index,
        `a section (§) of a document that is neither a public standard nor in the repository: "${before.trimStart()}§"`,
      );
    }
    for (const m of text.matchAll(new RegExp(OUTSIDE_NAMES, 'g'))) {
      at(m.index, `"${m[1]}" names a document kept outside the repository: cite the repository's own doc instead`);
    }
  }
  return findings;
}
