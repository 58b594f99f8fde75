// Generated from the TypeBox schemas by scripts/ui-types.ts (`node --import tsx scripts/ui-types.ts`): do not
// edit. The dashboard's resources and events as the API sends them, global types for its JSDoc (tsconfig.ui.json);
// never served.

type StreamOutput =
  | {
      kind: 'alsa';
      /** the ALSA device as aplay -L names it, e.g. hw:CARD=sndrpihifiberry,DEV=0 */
      device: string;
    }
  | {
      kind: 'fifo';
      /** absolute path of the FIFO the PCM is written to */
      path: string;
    }
  | {
      kind: 'null';
    };

type Player = {
  id: string;
  name: string;
  /** group volume, 0.5 = 50%: the average of all attached zones; a player without zones keeps its last value */
  volume: number;
  /** attached zones the caller may see */
  zoneIds: string[];
  input: {
    /** name of the configured amplifier (its driver name when a single one is configured by --driver) */
    amplifier: string;
    /** amplifier driver name */
    driver: string;
    /** amplifier source input the player feeds */
    channel: number;
  };
  /** a stream player's audio output (the appliance plays it, see /api/players/{id}/playback); null: a device wired to the input */
  output: StreamOutput | null;
  /** a stream player: playing while it plays (not paused or stopped); any other player: playing when an attached zone is on and unmuted */
  state: 'playing' | 'idle';
  /** false while the player cannot take writes (its input's amplifier is not configured); writes then answer 409 */
  available: boolean;
  /** why not, naming the amplifier and its unit (or that the amplifier is not configured); null while available */
  unavailableReason: string | null;
};

type ZoneTone = {
  /** -1 full cut, 0 flat, 1 full boost; null where the zone's amplifier lacks the control */
  bass: number | null;
  /** -1 full cut, 0 flat, 1 full boost; null where the zone's amplifier lacks the control */
  treble: number | null;
  /** -1 full left, 0 centre, 1 full right; null where the zone's amplifier lacks the control */
  balance: number | null;
  /** loudness compensation on or off; null where the zone's amplifier lacks it */
  loudness: boolean | null;
};

type ToneControls = {
  bass:
    | {
        available: true;
        /** native steps from flat (centre) to full cut (left) */
        down: number;
        /** native steps from flat (centre) to full boost (right) */
        up: number;
      }
    | {
        available: false;
        /** why the zone's amplifier has no such control, in the driver's words */
        reason: string;
      };
  treble:
    | {
        available: true;
        /** native steps from flat (centre) to full cut (left) */
        down: number;
        /** native steps from flat (centre) to full boost (right) */
        up: number;
      }
    | {
        available: false;
        /** why the zone's amplifier has no such control, in the driver's words */
        reason: string;
      };
  balance:
    | {
        available: true;
        /** native steps from flat (centre) to full cut (left) */
        down: number;
        /** native steps from flat (centre) to full boost (right) */
        up: number;
      }
    | {
        available: false;
        /** why the zone's amplifier has no such control, in the driver's words */
        reason: string;
      };
  loudness:
    | {
        available: true;
      }
    | {
        available: false;
        /** why the zone's amplifier has no such control, in the driver's words */
        reason: string;
      };
};

type AmplifierStatus = {
  /** a page is in progress on the amplifier (it overrides the zone while it lasts); null where the amplifier does not report it (or has not yet) */
  paging: boolean | null;
  /** do-not-disturb is set on the amplifier; null where the amplifier does not report it (or has not yet) */
  doNotDisturb: boolean | null;
  /** party mode is on; null where the amplifier does not report it (or has not yet) */
  party: boolean | null;
};

type Zone = {
  id: string;
  name: string;
  volume: number;
  muted: boolean;
  power: boolean;
  /** the player routed here, if visible to the caller */
  playerId: string | null;
  output: {
    /** name of the configured amplifier (its driver name when a single one is configured by --driver) */
    amplifier: string;
    /** amplifier driver name */
    driver: string;
    /** amplifier zone output */
    channel: number;
  };
  /** the most this zone ever plays at; higher requests are clamped to it */
  maxVolume: number;
  /** the volume the zone starts at whenever it powers on (at most maxVolume); null keeps the volume it had */
  turnOnVolume: number | null;
  /** when the sleep timer powers the zone off; null: no timer */
  sleepUntil: string | null;
  tone: ZoneTone;
  toneControls: ToneControls;
  amplifierStatus: AmplifierStatus;
  /** false while the zone cannot take writes (its amplifier unit is not fitted or does not answer, or its amplifier is not configured); writes then answer 409 */
  available: boolean;
  /** why not, naming the amplifier and its unit (or that the amplifier is not configured); null while available */
  unavailableReason: string | null;
};

type InputDevice = {
  id: string;
  name: string;
  kind: string;
  input: {
    /** name of the configured amplifier (its driver name when a single one is configured by --driver) */
    amplifier: string;
    /** amplifier driver name */
    driver: string;
    /** amplifier source input */
    channel: number;
  };
  isFavorite: boolean;
  /** false while the input device cannot take writes (its amplifier is not configured); writes then answer 409 */
  available: boolean;
  /** why not, naming the amplifier and its unit (or that the amplifier is not configured); null while available */
  unavailableReason: string | null;
};

/** a saved state of a set of zones (power, volume, mute, player), applied in one step */
type Scene = {
  id: string;
  name: string;
  zones: {
    zoneId: string;
    power: boolean;
    /** as captured; applied clamped to the zone's maxVolume */
    volume: number;
    muted: boolean;
    /** the player routed to the zone, or null for none */
    playerId: string | null;
    /** the zone's tone as captured; a control its amplifier lacks is not applied */
    tone?: {
      /** -1 full cut, 0 flat, 1 full boost */
      bass?: number;
      /** -1 full cut, 0 flat, 1 full boost */
      treble?: number;
      /** -1 full left, 0 centre, 1 full right */
      balance?: number;
      loudness?: boolean;
    };
  }[];
  createdAt: string;
  updatedAt: string;
};

type Engine = {
  /** starting (its first scan of the music folder included), up, restarting (it exited and is started again with back-off), failed (it could not start: detail says why; the next transport command tries again), missing (MPD is not installed), stopped */
  state: 'starting' | 'up' | 'restarting' | 'failed' | 'missing' | 'stopped';
  /** why it is not up, or the last fault of an output that could not open; null when all is well */
  detail: string | null;
};

type Playback = {
  playerId: string;
  engine: Engine;
  /** what holds the player's output and what the other fields describe: its playlist engine (mpd), a cast through one of its receivers, or an announcement. During a cast, title, artist and album are the sender's and the queue fields are empty */
  source: 'mpd' | 'airplay' | 'upnp' | 'squeezelite' | 'announcement';
  state: 'playing' | 'paused' | 'stopped';
  /** the playlist being played (null: a URI played on its own, or nothing) */
  playlistId: string | null;
  /** the current track's id in that playlist */
  trackId: string | null;
  /** position of the current track in the queue (tracks the appliance cannot play are left out of it) */
  index: number | null;
  queueLength: number;
  uri: string | null;
  title: string | null;
  artist: string | null;
  album: string | null;
  /** during a cast whose sender gave cover art: where to get it, GET /api/players/{id}/artwork?v=<version> (the version changes with the image); null otherwise */
  artwork: string | null;
  /** a radio stream's name (icy-name) */
  name: string | null;
  /** null for a stream without an end */
  durationMs: number | null;
  positionMs: number;
  /** when positionMs was read: while playing, the position now is positionMs plus the time since then */
  positionAt: string;
  /** the announcement this player is playing; transport commands wait for it (409) */
  announcementId: string | null;
};

type Announcement = {
  id: string;
  uri: string;
  /** the zones asked for */
  zoneIds: string[];
  /** the volume asked for; each zone plays it within its own limit */
  volume: number;
  /** the stream players that play it (one per amplifier), once it started */
  playerIds: string[];
  status: 'queued' | 'playing' | 'done' | 'failed' | 'cancelled';
  /** why it failed or was cancelled, or what could not be put back */
  detail: string | null;
  /** zones it did not play on: they cannot answer, or no stream player feeds their amplifier */
  skipped: {
    zoneId: string;
    reason: string;
  }[];
  /** zones not put back afterwards because someone changed them while it played (the newer change wins), or they were deleted */
  kept: {
    zoneId: string;
    reason: string;
  }[];
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
};

type User = {
  id: string;
  username: string;
  role: 'Admin' | 'Operator' | 'Viewer';
  /** masked: svc_ + first 4 hex + … + last 4; empty when the key was revoked */
  apiKey: string;
  isEnabled: boolean;
  createdAt: string;
  assignments: {
    /** players this user may see and control */
    playerIds: string[];
    /** zones this user may see and control */
    zoneIds: string[];
  };
  /** true while the account has the generated password of the first start; sign-in clients should ask for a new one */
  passwordChangeRequired: boolean;
};

type Track = {
  id: string;
  title: string;
  uri: string;
  durationMs: number | null;
};

type Playlist = {
  id: string;
  name: string;
  isFavorite: boolean;
  tracks: Track[];
  createdAt: string;
};

/** a playlist in the list: its size instead of its tracks (GET /api/playlists/{id} has them) */
type PlaylistSummary = {
  id: string;
  name: string;
  isFavorite: boolean;
  trackCount: number;
  /** the sum of the known track durations */
  durationMs: number;
  createdAt: string;
};

type LibraryEntry = {
  kind: 'folder' | 'track';
  /** a track's file: URI (what a playlist's track stores), or a folder's path to list next */
  uri: string;
  /** the last segment of the path */
  name: string;
  title: string | null;
  artist: string | null;
  album: string | null;
  durationMs: number | null;
};

type Problem = {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  requestId: string;
  errors?: Record<string, string[]>;
};

/** zones left as they were because they cannot answer, with the reason */
type Skipped = {
  zoneId: string;
  /** why the zone cannot answer: its amplifier and unit, or that the amplifier is not configured */
  reason: string;
}[];

type DomainEvent =
  /** group volume changed: the average of the attached zones, by any path (zone volume, keypad, attach, detach, limits, scenes) */
  | {
      type: 'player.volumeChanged';
      payload: {
        playerId: string;
        volume: number;
      };
    }
  /** zones attached, detached or moved (non-admins see only their zones) */
  | {
      type: 'player.zonesChanged';
      payload: {
        playerId: string;
        zoneIds: string[];
      };
    }
  /** a player was created */
  | {
      type: 'player.created';
      payload: {
        player: Player;
      };
    }
  /** a player was renamed */
  | {
      type: 'player.updated';
      payload: {
        player: Player;
      };
    }
  /** a player was deleted */
  | {
      type: 'player.deleted';
      payload: {
        playerId: string;
      };
    }
  /** zone volume set by the API or on the amplifier */
  | {
      type: 'zone.volumeChanged';
      payload: {
        zoneId: string;
        volume: number;
      };
    }
  /** zone muted or unmuted */
  | {
      type: 'zone.mutedChanged';
      payload: {
        zoneId: string;
        muted: boolean;
      };
    }
  /** zone switched on or off */
  | {
      type: 'zone.powerChanged';
      payload: {
        zoneId: string;
        power: boolean;
      };
    }
  /** a zone was created (or found on a new amplifier unit) */
  | {
      type: 'zone.created';
      payload: {
        zone: Zone;
      };
    }
  /** a zone was renamed or its volume limits changed */
  | {
      type: 'zone.updated';
      payload: {
        zone: Zone;
      };
    }
  /** a zone was deleted */
  | {
      type: 'zone.deleted';
      payload: {
        zoneId: string;
      };
    }
  /** a zone's amplifier unit stopped answering (writes to the zone answer 409) or answers again */
  | {
      type: 'zone.availabilityChanged';
      payload: {
        zoneId: string;
        available: boolean;
        /** why the zone cannot take writes (its amplifier and unit); null when available again */
        reason: string | null;
      };
    }
  /** a sleep timer was set, cancelled, or ended (it fired, or the zone was powered off) */
  | {
      type: 'zone.sleepChanged';
      payload: {
        zoneId: string;
        /** when the sleep timer powers the zone off; null: no timer */
        sleepUntil: string | null;
      };
    }
  /** a zone's tone changed: set by the API or a scene, or on the amplifier (a keypad, the front panel); the whole tone as the zone shows it */
  | {
      type: 'zone.toneChanged';
      payload: {
        zoneId: string;
        tone: ZoneTone;
      };
    }
  /** what the amplifier reports about the zone changed (a page began or ended, do-not-disturb, party mode); the whole status as the zone shows it */
  | {
      type: 'zone.statusChanged';
      payload: {
        zoneId: string;
        amplifierStatus: AmplifierStatus;
      };
    }
  /** a playlist was created, deleted, edited, reordered or (un)marked favorite */
  | {
      type: 'playlist.changed';
      payload: {
        playlistId: string;
        reason: 'tracksRemoved' | 'reordered' | 'tracksAdded' | 'favorite' | 'created' | 'deleted';
      };
    }
  /** a playlist was written to the export directory */
  | {
      type: 'playlist.exported';
      payload: {
        playlistId: string;
        filePath: string;
      };
    }
  /** input favorite changed */
  | {
      type: 'inputDevice.favoriteChanged';
      payload: {
        inputDeviceId: string;
        isFavorite: boolean;
      };
    }
  /** an input device was created */
  | {
      type: 'inputDevice.created';
      payload: {
        inputDevice: InputDevice;
      };
    }
  /** an input device was renamed or its kind changed */
  | {
      type: 'inputDevice.updated';
      payload: {
        inputDevice: InputDevice;
      };
    }
  /** an input device was deleted */
  | {
      type: 'inputDevice.deleted';
      payload: {
        inputDeviceId: string;
      };
    }
  /** a scene was saved (non-admins: only scenes whose zones they all see) */
  | {
      type: 'scene.created';
      payload: {
        /** a saved state of a set of zones (power, volume, mute, player), applied in one step */
        scene: Scene;
      };
    }
  /** a scene was renamed or its captured values edited */
  | {
      type: 'scene.updated';
      payload: {
        /** a saved state of a set of zones (power, volume, mute, player), applied in one step */
        scene: Scene;
      };
    }
  /** a scene was deleted */
  | {
      type: 'scene.deleted';
      payload: {
        sceneId: string;
        /** the zones the scene covered (who may see it) */
        zoneIds: string[];
      };
    }
  /** a scene (or the undo slot) was applied; the zone and player events of the change come with it */
  | {
      type: 'scene.applied';
      payload: {
        /** the scene applied, or "undo" for POST /api/scenes/undo */
        sceneId: string | 'undo';
        /** the zones the apply set */
        zoneIds: string[];
      };
    }
  /** an amplifier link went up or down */
  | {
      type: 'hardware.status';
      payload: {
        driver: string;
        online: boolean;
        /** name of the amplifier whose link changed */
        amplifier?: string;
      };
    }
  /** a user changed (admins only) */
  | {
      type: 'user.changed';
      payload: {
        userId: string;
      };
    }
  /** a stream player's playback changed: state, track, tags, playlist, a seek, an announcement (the player's state follows it) */
  | {
      type: 'player.playbackChanged';
      payload: {
        playerId: string;
        playback: Playback;
      };
    }
  /** where a playing stream player is in its track: at most once a second per player */
  | {
      type: 'player.position';
      payload: {
        playerId: string;
        positionMs: number;
        durationMs: number | null;
        positionAt: string;
      };
    }
  /** a track that cannot play was passed over; the queue goes on */
  | {
      type: 'player.trackSkipped';
      payload: {
        playerId: string;
        /** the playlist track, when it is one */
        trackId: string | null;
        index: number | null;
        uri: string;
        /** missing (no such file), unreachable (a stream that cannot be fetched), unknown-format, refused (not a URI the appliance plays), other */
        reason: 'missing' | 'unreachable' | 'unknown-format' | 'refused' | 'other';
        detail: string;
      };
    }
  /** a stream player's MPD went down, came up, could not start, or an output could not open */
  | {
      type: 'player.engineChanged';
      payload: {
        playerId: string;
        engine: Engine;
        /** when it came back up: fresh (nothing to give back), restored (queue, track, position and state are back), lost (why in detail) */
        recovery: 'fresh' | 'restored' | 'lost' | null;
      };
    }
  /** a stream player's receiver was switched on or off, or how it runs changed (started, stopped, restarting, a cast began or ended); the whole receiver as GET …/receivers shows it */
  | {
      type: 'player.receiverChanged';
      payload: {
        playerId: string;
        receiver: {
          /** airplay (AirPlay: shairport-sync), upnp (UPnP/DLNA: gmediarender) or squeezelite (Squeezelite: squeezelite) */
          kind: 'airplay' | 'upnp' | 'squeezelite';
          /** the receiver as people read it (AirPlay, UPnP/DLNA, Squeezelite) */
          name: string;
          /** switched on for this player by an admin */
          enabled: boolean;
          /** squeezelite only: its music server (host or host:port); null: found on the LAN, or another kind */
          server: string | null;
          /** whether its program is installed here (detail says what to install when not) */
          available: boolean;
          /** the Debian package that installs its program */
          package: string;
          /** stopped (switched off, or not started), running (its process is up), restarting (it went away, back soon) */
          phase: 'stopped' | 'running' | 'restarting';
          /** what a sender does through it */
          cast: 'idle' | 'playing' | 'paused';
          /** why it cannot run (its program missing) or is not running, or what it last reported going wrong; null when all is well */
          detail: string | null;
          /** airplay only, while its program runs: the protocol it runs as, "AirPlay 1" or "AirPlay 2" (an AirPlay 2 build of shairport-sync with nqptp running) */
          variant?: string;
        };
      };
    }
  /** a rescan of the music folder began or ended */
  | {
      type: 'library.scanChanged';
      payload: {
        scanning: boolean;
      };
    }
  /** an announcement waits its turn (non-admins: when they see all its zones) */
  | {
      type: 'announcement.queued';
      payload: {
        announcement: Announcement;
      };
    }
  /** an announcement began to play; the zone events of the change come with it */
  | {
      type: 'announcement.started';
      payload: {
        announcement: Announcement;
      };
    }
  /** an announcement played, failed or was cancelled, and what it changed was put back (kept lists what was not) */
  | {
      type: 'announcement.ended';
      payload: {
        announcement: Announcement;
      };
    };

/** missed events are gone: refetch state */
type StreamReset = {
  type: 'stream.reset';
  payload: {
    reason: string;
  };
};
