import { printableExcerpt } from "../text";
import type { SportType } from "../activities/schemas";
import type { z } from "zod";

/** The file formats an upload can hold (CONTRACT §11), recognised from the content. */
export const FILE_KINDS = ["fit", "gpx", "tcx"] as const;
export type FileKind = (typeof FILE_KINDS)[number];

/** Every stream key, in the order answers list them (CONTRACT §11). */
export const STREAM_KEYS = [
  "time_s",
  "latlng",
  "distance_m",
  "altitude_m",
  "speed_mps",
  "heart_rate_hz",
  "cadence_hz",
  "power_w",
  "temperature_c",
] as const;
export type StreamKey = (typeof STREAM_KEYS)[number];
export type ScalarStreamKey = Exclude<StreamKey, "time_s" | "latlng">;

/**
 * An activity's samples, column by column: every present array has `size` entries. `time_s`
 * is seconds since the first sample (never decreasing); a sample without a channel holds
 * `null`; a channel the file never recorded is absent.
 */
export type Streams = {
  size: number;
  time_s: number[];
  latlng?: ([number, number] | null)[];
} & { [K in ScalarStreamKey]?: (number | null)[] };

/** Totals as the activity row holds them; `null` where the file recorded nothing to derive one from. */
export type Totals = {
  elapsedTimeS: number;
  movingTimeS: number | null;
  distanceM: number | null;
  elevationGainM: number | null;
  averageSpeedMps: number | null;
  maxSpeedMps: number | null;
  averageHeartRateHz: number | null;
  maxHeartRateHz: number | null;
  averagePowerW: number | null;
  energyJ: number | null;
};

/** One lap (CONTRACT §11): `startOffsetS` counts from the activity's first sample. */
export type Lap = {
  startOffsetS: number;
  elapsedTimeS: number;
  movingTimeS: number | null;
  distanceM: number | null;
  elevationGainM: number | null;
  averageSpeedMps: number | null;
  maxSpeedMps: number | null;
  averageHeartRateHz: number | null;
  maxHeartRateHz: number | null;
  averagePowerW: number | null;
};

/** One activity read from a file: a FIT session, a GPX track, a TCX activity. */
export type ParsedActivity = {
  sport: z.output<typeof SportType>;
  /** The start instant (UTC): a FIT session's `start_time`, else the first timed sample. */
  startTime: Date;
  /**
   * Seconds from `startTime` to the first sample, the instant `time_s` and the laps'
   * `startOffsetS` count from: more than 0 where a FIT session starts before its first record.
   */
  firstSampleOffsetS: number;
  /** The file's own name for it (GPX `<name>`, TCX `<Notes>`), if any. */
  name: string | null;
  totals: Totals;
  streams: Streams;
  laps: Lap[];
};

/** Why a file cannot become an activity (CONTRACT §11 upload `error.code`), in words a person understands. */
export type FileErrorCode = "invalid_file" | "no_activity_data";

/** The longest message a FileError keeps (it quotes a file's own words at times). */
export const FILE_ERROR_MAX_CHARS = 500;

/**
 * A file the service will not read, and why, in words for the person who sent it. The message
 * often quotes the file (an XML parser's "Tag 'x' is an invalid name"), and the file may hold
 * anything: it is kept printable and short, since it is shown and stored as it is (PostgreSQL
 * text cannot even hold a NUL).
 */
export class FileError extends Error {
  constructor(
    readonly code: FileErrorCode,
    message: string,
  ) {
    super(printableExcerpt(message, FILE_ERROR_MAX_CHARS));
    this.name = "FileError";
  }
}
