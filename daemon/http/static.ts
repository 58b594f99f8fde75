// Serves the dashboard's static files from memory with ETag, Cache-Control and gzip, scripts and styles without their
// comment lines.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { UI_DIR } from '../paths.js';
import type { Fallback } from './dispatch.js';

interface Asset {
  body: Buffer;
  gzip: Buffer | undefined;
  etag: string;
  type: string;
  cache: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
};

/**
 * A script or style sheet as served: without its whole-line comments (`// …` lines and `/* … *\/` blocks that take
 * whole lines). The comments are for the people and the type check that read the source (JSDoc types, why a catch is
 * empty); browsers do not need them, and leaving them out keeps about 7% of the dashboard's gzipped bytes off every
 * first load. Lines only: a comment after code, or inside a string, stays as written (the dashboard has no string
 * that spans lines).
 */
export function withoutCommentLines(text: string): string {
  const kept: string[] = [];
  let inBlock = false;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (inBlock) {
      if (trimmed.endsWith('*/')) inBlock = false;
      else if (trimmed.includes('*/')) return text; // a block that ends mid-line: leave the file as it is
      continue;
    }
    if (trimmed.startsWith('//')) continue;
    if (trimmed.startsWith('/*')) {
      if (trimmed.endsWith('*/')) {
        if (trimmed.indexOf('*/') !== trimmed.length - 2) return text; // code after a block on one line
        continue;
      }
      if (trimmed.includes('*/')) return text;
      inBlock = true;
      continue;
    }
    kept.push(line);
  }
  return inBlock ? text : kept.join('\n');
}

/** A file's bytes as azcd serves them. */
export function servedBytes(name: string, bytes: Buffer): Buffer {
  const ext = path.extname(name);
  return ext === '.js' || ext === '.css' ? Buffer.from(withoutCommentLines(bytes.toString('utf8'))) : bytes;
}

function load(dir: string, prefix = ''): Map<string, Asset> {
  // zlib is loaded with the first page asked for (~1 MB of RSS): a daemon whose dashboard nobody opens never needs it.
  const { gzipSync } = process.getBuiltinModule('node:zlib');
  const assets = new Map<string, Asset>();
  if (!existsSync(dir)) return assets;
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) {
      for (const [key, asset] of load(file, `${prefix}/${name}`)) assets.set(key, asset);
      continue;
    }
    const type = TYPES[path.extname(name)];
    if (!type) continue;
    const body = servedBytes(name, readFileSync(file));
    const compressible = !type.startsWith('image/png');
    assets.set(`${prefix}/${name}`, {
      body,
      gzip: compressible ? gzipSync(body, { level: 9 }) : undefined,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
      type,
      // HTML must be revalidated so a new version shows at once; the rest is revalidated cheaply by ETag.
      cache: name.endsWith('.html') ? 'no-cache' : 'public, max-age=300, must-revalidate',
    });
  }
  return assets;
}

/** Returns the fallback the request pipeline calls for GET and HEAD requests no API route matched. */
export function createStaticHandler(dir = UI_DIR): Fallback {
  // Read and compressed on the first page request, not at start: a daemon nobody opens the dashboard of never pays.
  let assets: Map<string, Asset> | undefined;
  return (req, res) => {
    if (req.path.startsWith('/api/') || req.path === '/api') return false;
    assets ??= load(dir);
    const asset = assets.get(req.path === '/' ? '/index.html' : req.path);
    if (!asset) return false;
    const notModified = req.headers['if-none-match'] === asset.etag;
    const gzip = asset.gzip && /\bgzip\b/.test(req.headers['accept-encoding']);
    res.writeStatus(notModified ? '304 Not Modified' : '200 OK');
    res.writeHeader('ETag', asset.etag);
    res.writeHeader('Cache-Control', asset.cache);
    res.writeHeader('Vary', 'Accept-Encoding');
    res.writeHeader('X-Content-Type-Options', 'nosniff');
    if (asset.type.startsWith('text/html')) {
      res.writeHeader(
        'Content-Security-Policy',
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
      );
      res.writeHeader('Referrer-Policy', 'no-referrer');
    }
    if (notModified) {
      res.endWithoutBody();
      return true;
    }
    res.writeHeader('Content-Type', asset.type);
    if (gzip) res.writeHeader('Content-Encoding', 'gzip');
    res.end(req.method === 'HEAD' ? '' : gzip ? asset.gzip! : asset.body);
    return true;
  };
}
