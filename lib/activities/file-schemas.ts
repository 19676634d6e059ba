import { z } from "zod";
import { STREAM_KEYS, type StreamKey } from "../files/types";

// Apart from schemas.ts: lib/files/types.ts reads SportType from there, so the stream shapes,
// which read STREAM_KEYS from lib/files, would close an import cycle if they lived beside it.

export const RESOLUTION_NAMES = ["low", "medium", "high", "full"] as const;
export const Resolution = z
  .enum(RESOLUTION_NAMES)
  .meta({ id: "StreamResolution", description: "`low`: at most 100 points, `medium`: 1,000, `high`: 10,000, `full`: every sample." });

const channel = (description: string) => z.array(z.number().nullable()).optional().meta({ description });

const STREAM_SCHEMAS = {
  time_s: z.array(z.number()).optional().meta({ description: "Seconds since the first sample; never decreasing." }),
  latlng: z
    .array(z.tuple([z.number(), z.number()]).nullable())
    .optional()
    .meta({ description: "`[latitude, longitude]` in decimal degrees (WGS 84). Needs `location.read`." }),
  distance_m: channel("Distance covered since the start, metres."),
  altitude_m: channel("Altitude, metres."),
  speed_mps: channel("Speed, metres per second."),
  heart_rate_hz: channel("Heart rate, beats per second (150 bpm is 2.5)."),
  cadence_hz: channel("Cadence: revolutions, or strides as the device counts them, per second."),
  power_w: channel("Power, watts."),
  temperature_c: channel("Temperature, degrees Celsius."),
} satisfies Record<StreamKey, z.ZodType>;

export const StreamSet = z
  .object(STREAM_SCHEMAS)
  .meta({
    id: "StreamSet",
    description:
      "One array per key asked for, each with `size` entries, sample by sample; a sample without a channel holds null, and a key the activity never recorded is left out.",
  });

export const ActivityStreams = z
  .object({
    activity_id: z.string(),
    resolution: Resolution,
    original_size: z.number().int().min(0).meta({ description: "How many samples the activity has; 0 for one recorded by hand." }),
    size: z.number().int().min(0).meta({ description: "How many samples this answer holds: at most the resolution's bound, first and last always among them." }),
    streams: StreamSet,
  })
  .meta({ id: "ActivityStreams", description: "An activity's samples, channel by channel." });

/** `keys=time_s,heart_rate_hz`: names separated by commas, spaces around them ignored. */
const StreamKeys = z
  .string()
  .max(500)
  .transform((s) => s.split(",").map((k) => k.trim()))
  .pipe(z.array(z.enum(STREAM_KEYS)))
  .optional()
  .meta({
    description: `Comma-separated keys among ${STREAM_KEYS.map((k) => `\`${k}\``).join(", ")}. Default: every key the activity has that the token may see (\`latlng\` needs \`location.read\`).`,
    example: "time_s,heart_rate_hz",
  });

export const StreamsQuery = z.object({
  keys: StreamKeys,
  resolution: Resolution.default("full"),
});

const seconds = z.number().min(0);
export const Lap = z
  .object({
    index: z.number().int().min(0).meta({ description: "Counts from 0." }),
    start_offset_s: seconds.meta({ description: "Seconds from the activity's first sample to the lap's start." }),
    elapsed_time_s: seconds,
    moving_time_s: seconds.nullable(),
    distance_m: z.number().nullable(),
    elevation_gain_m: z.number().nullable(),
    average_speed_mps: z.number().nullable(),
    max_speed_mps: z.number().nullable(),
    average_heart_rate_hz: z.number().nullable(),
    max_heart_rate_hz: z.number().nullable(),
    average_power_w: z.number().nullable(),
  })
  .meta({ id: "Lap", description: "One lap of an activity, in SI units; unknown measurements are null." });

export const LapList = z.object({ data: z.array(Lap) }).meta({ id: "LapList" });

export const EXPORT_FORMATS = ["original", "fit", "gpx", "tcx"] as const;
export const ExportFormat = z.enum(EXPORT_FORMATS).meta({
  id: "ExportFormat",
  description: "`original`: the uploaded file byte for byte (a gzip upload as the same gzip bytes); `fit`, `gpx`, `tcx`: a file generated from the streams and laps.",
});
export const ExportQuery = z.object({ format: ExportFormat.default("original") });
