// JSON read as it arrives: text is fed in pieces, values are built as usual, except the elements of arrays the
// caller detaches (a backup's tracks), which are handed over one by one and never kept. Memory holds what is kept,
// bounded by `maxKeptChars`, and each piece costs time in proportion to its length.

/** Where a value sits: the keys and indices from the root. */
export type JsonPath = ReadonlyArray<string | number>;

export interface JsonStreamOptions {
  /** Whether the elements of the array at `path` are handed to onElement instead of being kept. */
  detach(path: JsonPath): boolean;
  /** A complete element of a detached array; `path` ends with the element's index. */
  onElement(value: unknown, path: JsonPath): void;
  /** How deeply arrays and objects may nest. */
  maxDepth: number;
  /** Characters of keys and values kept (outside detached arrays), about the size of the kept part as JSON. */
  maxKeptChars: number;
  /** Characters of any single string. */
  maxStringChars: number;
}

/** A problem with the JSON itself (not with what it says): the request body is not valid JSON, or too large. */
export class JsonStreamError extends Error {}

interface Frame {
  array: boolean;
  value: unknown[] | Record<string, unknown>;
  /** Object: the key whose value comes next. Array: the index of the next element. */
  key: string;
  index: number;
  detached: boolean;
  /** Inside an element of a detached array: built, handed over, never kept. */
  inDetached: boolean;
}

enum Expect {
  Value,
  ValueOrClose,
  Key,
  KeyOrClose,
  Colon,
  Next,
  End,
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

export class JsonStream {
  private readonly stack: Frame[] = [];
  private expect = Expect.Value;
  private root: unknown = undefined;
  private kept = 0;
  private consumed = 0;
  /** A string being read: its pieces so far, whether it is a key, and an escape cut by the end of a piece. */
  private string: { parts: string[]; length: number; key: boolean; escape: string } | undefined;
  /** A number or literal being read (they have no closing mark: the next delimiter ends them). */
  private word = '';

  constructor(private readonly options: JsonStreamOptions) {}

  /** Reads a piece of the text; throws JsonStreamError on invalid JSON and whatever onElement throws. */
  write(text: string): void {
    let i = 0;
    const n = text.length;
    while (i < n) {
      if (this.string) {
        i = this.readString(text, i);
        continue;
      }
      const c = text.charCodeAt(i);
      if (this.word !== '') {
        if (isWordChar(c)) {
          this.word += text[i];
          if (this.word.length > 400) this.fail(i, 'a number or literal is too long');
          i++;
          continue;
        }
        this.endWord(i);
        continue;
      }
      i++;
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
      switch (this.expect) {
        case Expect.Value:
        case Expect.ValueOrClose:
          if (c === 0x5d && this.expect === Expect.ValueOrClose) this.close(true, i);
          else this.startValue(c, text[i - 1]!, i);
          break;
        case Expect.Key:
        case Expect.KeyOrClose:
          if (c === 0x22) this.string = { parts: [], length: 0, key: true, escape: '' };
          else if (c === 0x7d && this.expect === Expect.KeyOrClose) this.close(false, i);
          else this.fail(i, 'expected a key in double quotes');
          break;
        case Expect.Colon:
          if (c !== 0x3a) this.fail(i, 'expected ":" after a key');
          this.expect = Expect.Value;
          break;
        case Expect.Next: {
          const top = this.stack[this.stack.length - 1]!;
          if (c === 0x2c) this.expect = top.array ? Expect.Value : Expect.Key;
          else if (c === (top.array ? 0x5d : 0x7d)) this.close(top.array, i);
          else this.fail(i, `expected "," or "${top.array ? ']' : '}'}"`);
          break;
        }
        case Expect.End:
          this.fail(i, 'unexpected text after the end of the JSON value');
      }
    }
    this.consumed += n;
  }

  /** Ends the text and returns the root value (with detached arrays empty). */
  end(): unknown {
    if (this.word !== '') this.endWord(0);
    if (this.expect !== Expect.End || this.string)
      throw new JsonStreamError('the request body is not valid JSON: it ends before its value does');
    return this.root;
  }

  private startValue(c: number, char: string, at: number): void {
    if (c === 0x22) this.string = { parts: [], length: 0, key: false, escape: '' };
    else if (c === 0x7b || c === 0x5b) this.open(c === 0x5b, at);
    else if (isWordChar(c)) this.word = char;
    else this.fail(at, `unexpected "${char}"`);
  }

  private open(array: boolean, at: number): void {
    if (this.stack.length >= this.options.maxDepth)
      this.fail(at, `arrays and objects nest more than ${this.options.maxDepth} levels deep`);
    const parent = this.stack[this.stack.length - 1];
    const inDetached = parent !== undefined && (parent.detached || parent.inDetached);
    const detached = array && !inDetached && this.options.detach(this.path());
    this.stack.push({ array, value: array ? [] : {}, key: '', index: 0, detached, inDetached });
    this.expect = array ? Expect.ValueOrClose : Expect.KeyOrClose;
  }

  private close(array: boolean, at: number): void {
    const frame = this.stack.pop();
    if (!frame || frame.array !== array) this.fail(at, `unexpected "${array ? ']' : '}'}"`);
    this.value(frame!.value);
  }

  /** A complete value: kept in its parent, handed over (an element of a detached array), or the root. */
  private value(value: unknown): void {
    const top = this.stack[this.stack.length - 1];
    if (!top) {
      this.root = value;
      this.expect = Expect.End;
      return;
    }
    if (top.array) {
      if (top.detached) this.options.onElement(value, this.path());
      else (top.value as unknown[]).push(value);
      top.index++;
    } else {
      const object = top.value as Record<string, unknown>;
      // A key given twice would let later text replace what was checked or staged for the first.
      if (Object.hasOwn(object, top.key)) this.fail(0, `the key "${top.key.slice(0, 40)}" appears twice in one object`);
      // As JSON.parse does: "__proto__" is a key like any other, never the object's prototype.
      Object.defineProperty(object, top.key, { value, enumerable: true, writable: true, configurable: true });
    }
    this.expect = Expect.Next;
  }

  private keep(chars: number, at: number): void {
    const top = this.stack[this.stack.length - 1];
    if (top && (top.detached || top.inDetached)) return;
    this.kept += chars;
    if (this.kept > this.options.maxKeptChars)
      this.fail(at, `the document apart from its tracks is larger than ${this.options.maxKeptChars} characters`);
  }

  private endWord(at: number): void {
    const word = this.word;
    this.word = '';
    let value: unknown;
    if (word === 'true') value = true;
    else if (word === 'false') value = false;
    else if (word === 'null') value = null;
    else if (NUMBER.test(word)) value = Number(word);
    else this.fail(at, `"${word.slice(0, 20)}" is not a JSON value`);
    this.keep(word.length, at);
    this.value(value);
  }

  /** Reads string characters from `i`; returns where it stopped (after the closing quote, or the end of the piece). */
  private readString(text: string, i: number): number {
    const s = this.string!;
    const n = text.length;
    while (i < n) {
      if (s.escape !== '') {
        s.escape += text[i++];
        if (s.escape.length === 2 && s.escape[1] !== 'u') {
          const plain = ESCAPES[s.escape[1]!];
          if (plain === undefined) this.fail(i, `"${s.escape}" is not a JSON escape`);
          this.append(plain!, i);
          s.escape = '';
        } else if (s.escape.length === 6) {
          if (!/^\\u[0-9a-fA-F]{4}$/.test(s.escape)) this.fail(i, `"${s.escape}" is not a JSON escape`);
          this.append(String.fromCharCode(parseInt(s.escape.slice(2), 16)), i);
          s.escape = '';
        }
        continue;
      }
      let j = i;
      let c = 0;
      while (j < n) {
        c = text.charCodeAt(j);
        if (c === 0x22 || c === 0x5c || c < 0x20) break;
        j++;
      }
      if (j > i) this.append(text.slice(i, j), j);
      if (j === n) return n;
      if (c < 0x20) this.fail(j, 'a control character inside a string must be escaped');
      if (c === 0x5c) {
        s.escape = '\\';
        i = j + 1;
        continue;
      }
      // The closing quote.
      this.string = undefined;
      const value = s.parts.length === 1 ? s.parts[0]! : s.parts.join('');
      this.keep(value.length + 2, j);
      if (s.key) {
        this.stack[this.stack.length - 1]!.key = value;
        this.expect = Expect.Colon;
      } else {
        this.value(value);
      }
      return j + 1;
    }
    return i;
  }

  private append(part: string, at: number): void {
    const s = this.string!;
    s.length += part.length;
    if (s.length > this.options.maxStringChars)
      this.fail(at, `a string is longer than ${this.options.maxStringChars} characters`);
    s.parts.push(part);
  }

  private path(): JsonPath {
    return this.stack.map((f) => (f.array ? f.index : f.key));
  }

  private fail(at: number, why: string): never {
    throw new JsonStreamError(`the request body is not valid JSON at character ${this.consumed + at}: ${why}`);
  }
}

/** Characters of numbers and of true, false and null. */
function isWordChar(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2d ||
    c === 0x2b ||
    c === 0x2e ||
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x41 && c <= 0x5a)
  );
}
