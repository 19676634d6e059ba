/**
 * A zone as the picker shows it. The fixed-offset zones' names carry POSIX's inverted sign
 * (Etc/GMT+12 is 12 hours behind UTC), so each says its offset the way people read it.
 */
export function zoneLabel(zone: string): string {
  const fixed = /^Etc\/GMT([+-])(\d{1,2})$/.exec(zone);
  if (fixed) return `${zone} (UTC${fixed[1] === "+" ? "−" : "+"}${fixed[2]!.padStart(2, "0")}:00, no summer time)`;
  return zone.replaceAll("_", " ");
}
