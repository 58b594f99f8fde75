// The shell blocks of the README and the docs, and a shell to run them as a user's terminal would.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './paths.js';

/**
 * The fenced `sh` blocks of a Markdown file of the project (README.md unless `file` names another, e.g.
 * docs/home-assistant.md), or of its section under `heading`, in order, without their indentation.
 */
export function shellBlocks(heading?: string, file = 'README.md'): string[] {
  let text = readFileSync(path.join(ROOT, file), 'utf8');
  if (heading) {
    const start = text.indexOf(`\n${heading}\n`);
    if (start < 0) throw new Error(`${file} has no section ${JSON.stringify(heading)}`);
    const level = heading.split(' ')[0]!;
    const next = text.indexOf(`\n${level} `, start + heading.length + 1);
    text = text.slice(start, next < 0 ? undefined : next);
  }
  return [...text.matchAll(/^( *)```sh\n([\s\S]*?)^ *```/gm)].map(([, indent, body]) =>
    body!.replace(new RegExp(`^${indent}`, 'gm'), ''),
  );
}

/**
 * Runs a script as a user's shell would, with `-euo pipefail` (in `cwd` when given). Standard input is /dev/null: bash takes a socket on
 * stdin for a remote shell and then sources /etc/bash.bashrc (when SHLVL is unset), which fails under `-u` on Debian.
 */
export function runBash(
  script: string,
  env: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
      env,
      cwd,
      timeout: 60_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}
