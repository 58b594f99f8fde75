// A backup document written a piece at a time: everything but the tracks is read at once, each playlist's tracks
// when its turn comes, so a download of the largest configuration never holds the whole document in memory.
import type { TrackRow } from '../../store/playlists-repo.js';
import type { BackupDocument } from './backup-format.js';

/** Pieces are handed out in about this size: big enough to be cheap per write, small enough to stay out of the way. */
const PIECE_CHARS = 64 * 1024;
/** Stands for the playlists in the document's text while the rest is encoded in one go. */
const PLAYLISTS_MARK = '\u0000playlists\u0000';

/** The next piece of the document, or null at its end. */
export interface DocumentStream {
  read(): string | null;
  close(): void;
}

/**
 * Writes `doc` (whose playlists carry no tracks) with every playlist's tracks from `tracksOf`, read when the
 * playlist is written: each playlist is as it was at that moment, whole (one read), and the rest as it was when
 * `doc` was made. A playlist deleted meanwhile is written without tracks, so the document still restores.
 */
export function streamDocument(doc: BackupDocument, tracksOf: (playlistId: string) => TrackRow[]): DocumentStream {
  const pieces = documentPieces(doc, tracksOf);
  let done = false;
  return {
    read() {
      if (done) return null;
      let out = '';
      while (out.length < PIECE_CHARS) {
        const next = pieces.next();
        if (next.done) {
          done = true;
          break;
        }
        out += next.value;
      }
      return out === '' ? null : out;
    },
    close() {
      done = true;
      pieces.return(undefined);
    },
  };
}

function* documentPieces(
  doc: BackupDocument,
  tracksOf: (playlistId: string) => TrackRow[],
): Generator<string, void, undefined> {
  // The shape of JSON.stringify(doc, null, 1), playlists one line each and a track per line.
  const text = JSON.stringify({ ...doc, playlists: PLAYLISTS_MARK }, null, 1);
  const at = text.indexOf(JSON.stringify(PLAYLISTS_MARK));
  yield `${text.slice(0, at)}[`;
  for (let i = 0; i < doc.playlists.length; i++) {
    const { tracks: _none, ...playlist } = doc.playlists[i]!;
    yield `${i > 0 ? ',' : ''}\n  ${JSON.stringify(playlist).slice(0, -1)},"tracks":[`;
    const rows = tracksOf(playlist.id);
    for (let j = 0; j < rows.length; j++) {
      const t = rows[j]!;
      yield `${j > 0 ? ',' : ''}\n   ${JSON.stringify({ id: t.id, title: t.title, uri: t.uri, durationMs: t.duration_ms })}`;
    }
    yield rows.length > 0 ? '\n  ]}' : ']}';
  }
  yield `${doc.playlists.length > 0 ? '\n ' : ''}]${text.slice(at + JSON.stringify(PLAYLISTS_MARK).length)}`;
}
