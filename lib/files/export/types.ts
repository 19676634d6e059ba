import type { z } from "zod";
import type { SportType } from "../../activities/schemas";
import type { Lap, Streams, Totals } from "../types";

/** What an export is made from: the activity row, its streams and its laps. */
export type ExportInput = {
  sport: z.output<typeof SportType>;
  startTime: Date;
  /** The athlete's wall clock less UTC at the start, in seconds (FIT's `local_timestamp`); absent if not known. */
  utcOffsetS?: number | null;
  /** Seconds from `startTime` to the first sample, from which `time_s` and the laps' `startOffsetS` count (ParsedActivity). */
  firstSampleOffsetS: number;
  name: string;
  totals: Totals;
  streams: Streams;
  laps: Lap[];
};
