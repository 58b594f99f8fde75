// Types for scripts/bundle.mjs (plain JavaScript so `npm start` needs no TypeScript loader).
export declare const EXTERNAL: string[];
export declare const NODE_ESM_BUNDLE: Record<string, unknown>;
export declare const REQUIRE_BANNER: string;
export declare function bundleDaemon(options: {
  root: string;
  outdir?: string;
  log?: (msg: string) => void;
}): Promise<boolean>;
