// A config file's JSON: parsed by JSON.parse, and when that fails, scanned once more to say on which line and column
// it goes wrong and why. Node's own message names a position for some mistakes only (none for an unexpected token or
// the end of the file on Node 20) and quotes the text around it, which could hold something secret.

export type JsonText = { ok: true; value: unknown } | { ok: false; line: number; column: number; problem: string };

export function parseJsonText(text: string): JsonText {
  // A byte order mark, as some editors save one, is not part of the document.
  const body = text.startsWith('\ufeff') ? text.slice(1) : text;
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch (err) {
    const found = syntaxError(body) ?? { offset: 0, problem: (err as Error).message };
    return { ok: false, ...lineColumn(body, found.offset), problem: found.problem };
  }
}

/** Line and column, both from 1, of a character offset; a column counts characters, not bytes. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: [...before.slice(lineStart)].length + 1 };
}

class Syntax extends Error {
  constructor(
    readonly offset: number,
    readonly problem: string,
  ) {
    super(problem);
  }
}

/** Where and why `text` is not JSON, or undefined when this scan finds nothing wrong. */
function syntaxError(text: string): { offset: number; problem: string } | undefined {
  try {
    const scan = new Scan(text);
    scan.value('a value');
    scan.space();
    if (scan.at < text.length) scan.fail('more text after the end of the JSON value');
    return undefined;
  } catch (err) {
    if (err instanceof Syntax) return { offset: err.offset, problem: err.problem };
    // Nesting too deep for this scan: JSON.parse's own message is all there is.
    return undefined;
  }
}

const NUMBER = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const ESCAPE = /\\(["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

class Scan {
  at = 0;
  constructor(private readonly text: string) {}

  fail(problem: string, offset = this.at): never {
    throw new Syntax(offset, problem);
  }

  space(): void {
    while (' \t\n\r'.includes(this.text[this.at] || 'x')) this.at++;
  }

  value(expected: string): void {
    this.space();
    const c = this.text[this.at];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return this.string();
    NUMBER.lastIndex = this.at;
    if ((c === '-' || (c !== undefined && c >= '0' && c <= '9')) && NUMBER.test(this.text)) {
      this.at = NUMBER.lastIndex;
      return;
    }
    const word = ['true', 'false', 'null'].find((w) => this.text.startsWith(w, this.at));
    if (word) {
      this.at += word.length;
      return;
    }
    this.unexpected(expected);
  }

  private object(): void {
    this.members('}', () => {
      this.space();
      if (this.text[this.at] !== '"') this.unexpected('a key in double quotes');
      this.string();
      this.space();
      if (this.text[this.at] !== ':') this.unexpected('":" after the key');
      this.at++;
      this.value('a value after ":"');
    });
  }

  private array(): void {
    this.members(']', () => this.value('a value'));
  }

  /** The members of an object or array from its opening bracket, each read by `member`, up to `close`. */
  private members(close: '}' | ']', member: () => void): void {
    this.at++;
    this.space();
    if (this.text[this.at] === close) {
      this.at++;
      return;
    }
    for (;;) {
      member();
      this.space();
      const c = this.text[this.at];
      if (c === close) {
        this.at++;
        return;
      }
      if (c !== ',') this.unexpected(`"," or "${close}" after a value`);
      const comma = this.at++;
      this.space();
      if (this.text[this.at] === close) this.fail(`a comma before "${close}" is one too many in JSON`, comma);
    }
  }

  private string(): void {
    const start = this.at++;
    for (;;) {
      const c = this.text[this.at];
      if (c === undefined) this.fail('this string has no closing double quote', start);
      if (c === '"') {
        this.at++;
        return;
      }
      if (c === '\\') {
        ESCAPE.lastIndex = this.at;
        if (!ESCAPE.test(this.text))
          this.fail('a backslash in a string starts one of \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX');
        this.at = ESCAPE.lastIndex;
      } else if (c < ' ') {
        this.fail('a line break or control character inside a string (write it as \\n or \\uXXXX)');
      } else {
        this.at++;
      }
    }
  }

  private unexpected(expected: string): never {
    const c = this.text[this.at];
    if (c === undefined) this.fail(`the file ends where ${expected} should be`);
    if (c === '/') this.fail('JSON has no comments');
    if (c === "'") this.fail(`expected ${expected}; JSON strings take double quotes`);
    const found =
      c === '"'
        ? 'a string'
        : /[\w$]/.test(c)
          ? `"${/^[\w$.-]+/.exec(this.text.slice(this.at))![0].slice(0, 20)}"`
          : JSON.stringify(c);
    this.fail(`expected ${expected}, found ${found}`);
  }
}
