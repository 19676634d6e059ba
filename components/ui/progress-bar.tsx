const TONES = {
  active: "bg-brand-600",
  success: "bg-emerald-600",
  error: "bg-red-600",
} as const;

/**
 * A progress bar people and assistive technology read the same way: `value` from 0 to 1, or
 * `null` while the remaining work cannot be measured (then it pulses, and has no aria-valuenow).
 */
export function ProgressBar({
  label,
  value,
  valueText,
  tone = "active",
}: {
  label: string;
  value: number | null;
  valueText: string;
  tone?: keyof typeof TONES;
}) {
  const pct = value === null ? null : Math.round(Math.min(1, Math.max(0, value)) * 100);
  return (
    <div
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={pct ?? undefined}
      aria-valuetext={valueText}
      className="h-2 w-full overflow-hidden rounded-full bg-slate-200"
    >
      <div
        className={`h-full rounded-full transition-[width] duration-200 ${TONES[tone]} ${pct === null ? "w-full motion-safe:animate-pulse opacity-70" : ""}`}
        style={pct === null ? undefined : { width: `${pct}%` }}
      />
    </div>
  );
}
