// Types for scripts/ensure-build.mjs (plain JavaScript so `npm start` needs no TypeScript loader).
export declare const SOURCE_DIRS: string[];
export declare const SOURCE_FILES: string[];
export declare const OUTPUT: string;
export declare const STAMP: string;
export declare function newestSource(root: string): { mtimeMs: number; file: string };
export declare function staleReason(root: string): string | undefined;
export declare function ensureBuild(options: {
  root: string;
  force?: boolean;
  build: () => boolean | Promise<boolean>;
  log?: (msg: string) => void;
}): Promise<{ built: boolean; failed?: boolean }>;
/** tsc -p tsconfig.build.json, then the daemon's bundle (scripts/bundle.mjs); whether both succeeded. */
export declare function buildAll(root: string): Promise<boolean>;
