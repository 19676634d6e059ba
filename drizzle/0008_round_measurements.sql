-- Measurements are stored to the precision each is worth (lib/db/schema/measure.ts); rows written before are rounded alike.
UPDATE "activities" SET
  "distance_m" = round("distance_m"::numeric, 1)::double precision,
  "elevation_gain_m" = round("elevation_gain_m"::numeric, 1)::double precision,
  "average_speed_mps" = round("average_speed_mps"::numeric, 3)::double precision,
  "max_speed_mps" = round("max_speed_mps"::numeric, 3)::double precision,
  "average_heart_rate_hz" = round("average_heart_rate_hz"::numeric, 4)::double precision,
  "max_heart_rate_hz" = round("max_heart_rate_hz"::numeric, 4)::double precision,
  "average_power_w" = round("average_power_w"::numeric, 1)::double precision,
  "energy_j" = round("energy_j"::numeric, 0)::double precision;--> statement-breakpoint
UPDATE "activity_laps" SET
  "start_offset_s" = round("start_offset_s"::numeric, 3)::double precision,
  "elapsed_time_s" = round("elapsed_time_s"::numeric, 3)::double precision,
  "moving_time_s" = round("moving_time_s"::numeric, 3)::double precision,
  "distance_m" = round("distance_m"::numeric, 1)::double precision,
  "elevation_gain_m" = round("elevation_gain_m"::numeric, 1)::double precision,
  "average_speed_mps" = round("average_speed_mps"::numeric, 3)::double precision,
  "max_speed_mps" = round("max_speed_mps"::numeric, 3)::double precision,
  "average_heart_rate_hz" = round("average_heart_rate_hz"::numeric, 4)::double precision,
  "max_heart_rate_hz" = round("max_heart_rate_hz"::numeric, 4)::double precision,
  "average_power_w" = round("average_power_w"::numeric, 1)::double precision;
