// MPD's text protocol, pure: commands and command lists as lines, replies parsed line by line (no I/O, no timers).

/** One reply's `key: value` lines, in order (keys repeat: one `file:` per song of a listing). */
export type Pairs = Array<[string, string]>;

/** An `ACK [error@index] {command} message` reply: MPD refused command number `index` of a list (0 alone). */
export class MpdAck extends Error {
  constructor(
    readonly code: number,
    readonly index: number,
    readonly command: string,
    readonly text: string,
    /** Replies of the commands of the list that ran before the refused one. */
    readonly completed: Pairs[] = [],
  ) {
    super(`MPD refused ${command || 'a command'}: ${text}`);
    this.name = 'MpdAck';
  }
}

/** ACK codes MPD documents (src/protocol/Ack.hxx). */
export const ACK = {
  NOT_LIST: 1,
  ARG: 2,
  PASSWORD: 3,
  PERMISSION: 4,
  UNKNOWN: 5,
  NO_EXIST: 50,
  PLAYLIST_MAX: 51,
  SYSTEM: 52,
  PLAYLIST_LOAD: 53,
  UPDATE_ALREADY: 54,
  PLAYER_SYNC: 55,
  EXIST: 56,
} as const;

/** Quotes one argument: MPD reads `"…"` with `\` escaping `"` and `\`. A line break cannot be sent. */
export function quote(arg: string | number): string {
  const text = String(arg);
  if (/[\r\n]/.test(text))
    throw new Error(`an MPD argument cannot hold a line break: ${JSON.stringify(text.slice(0, 80))}`);
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** One command line: the name, then each argument quoted. */
export function command(name: string, ...args: Array<string | number>): string {
  return [name, ...args.map(quote)].join(' ');
}

/** The bytes of a request: one command alone, or several as one list MPD runs without interleaving another client. */
export function encodeRequest(commands: string[]): string {
  if (commands.length === 1) return `${commands[0]}\n`;
  return `command_list_ok_begin\n${commands.join('\n')}\ncommand_list_end\n`;
}

const ACK_LINE = /^ACK \[(\d+)@(\d+)\] \{([^}]*)\} ?(.*)$/;

/** What the parser hands back per request: one Pairs per command (list_OK separates them), or an ACK. */
export type Reply = { ok: true; results: Pairs[] } | { ok: false; ack: MpdAck };

/**
 * Splits MPD's output into replies. Text arrives in chunks cut anywhere; a reply ends at `OK` or `ACK …`, and
 * within a command list each command's part ends at `list_OK`. The greeting (`OK MPD 0.23.5`) is a reply too.
 */
export class ReplyParser {
  private buffer = '';
  private pairs: Pairs = [];
  private results: Pairs[] = [];

  constructor(private readonly onReply: (reply: Reply, greeting?: string) => void) {}

  push(chunk: string): void {
    this.buffer += chunk;
    let start = 0;
    for (let end = this.buffer.indexOf('\n', start); end >= 0; end = this.buffer.indexOf('\n', start)) {
      this.line(this.buffer.slice(start, end));
      start = end + 1;
    }
    this.buffer = this.buffer.slice(start);
  }

  private line(line: string): void {
    if (line === 'OK' || line.startsWith('OK MPD ')) {
      this.results.push(this.pairs);
      const reply: Reply = { ok: true, results: this.results };
      this.reset();
      this.onReply(reply, line === 'OK' ? undefined : line.slice(7));
      return;
    }
    if (line === 'list_OK') {
      this.results.push(this.pairs);
      this.pairs = [];
      return;
    }
    const ack = ACK_LINE.exec(line);
    if (ack) {
      const reply: Reply = {
        ok: false,
        ack: new MpdAck(Number(ack[1]), Number(ack[2]), ack[3]!, ack[4]!, this.results),
      };
      this.reset();
      this.onReply(reply);
      return;
    }
    const colon = line.indexOf(': ');
    if (colon > 0) this.pairs.push([line.slice(0, colon), line.slice(colon + 2)]);
    // Anything else is not MPD's protocol; it is dropped rather than allowed to derail the replies after it.
  }

  private reset(): void {
    this.pairs = [];
    this.results = [];
  }
}

/** The first value of `key`, if any. */
export function field(pairs: Pairs, key: string): string | undefined {
  for (const [k, v] of pairs) if (k === key) return v;
  return undefined;
}

/** Splits a listing into records, each starting at one of `starts` (`file`, `directory`, …). */
export function records(pairs: Pairs, starts: readonly string[]): Pairs[] {
  const out: Pairs[] = [];
  for (const pair of pairs) {
    if (starts.includes(pair[0]) || out.length === 0) out.push([]);
    out[out.length - 1]!.push(pair);
  }
  return out;
}
