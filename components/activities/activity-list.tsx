"use client";

import { useInfiniteQuery, type QueryKey } from "@tanstack/react-query";
import { consoleFetch, isClientError } from "@/components/console/api";
import { Button } from "@/components/ui/button";
import type { ActivityWire } from "@/lib/activities/schemas";
import { ActivityRow } from "./activity-row";
import type { Units } from "./units";

type ActivityPage = { data: ActivityWire[]; next_cursor: string | null };

// A phone screen's worth of rows, a few times over; "Load more" brings the next page.
const PAGE_SIZE = 20;

/**
 * A console list of activities (`path`: the athlete's own, or a team member's), newest first, a
 * page at a time. A refusal (4xx) is not asked again: it will not turn into an answer.
 */
export function useActivityPages(queryKey: QueryKey, path: string) {
  const list = useInfiniteQuery({
    queryKey,
    queryFn: ({ pageParam }) => consoleFetch<ActivityPage>(`${path}?limit=${PAGE_SIZE}${pageParam ? `&cursor=${encodeURIComponent(pageParam)}` : ""}`),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    retry: (failures, err) => !isClientError(err) && failures < 1,
  });
  return { list, activities: list.data?.pages.flatMap((p) => p.data) ?? [] };
}

/** The rows of useActivityPages, under `label`, and "Load more" while there are more. */
export function ActivityList({ pages: { list, activities }, units, label }: { pages: ReturnType<typeof useActivityPages>; units: Units; label: string }) {
  return (
    <>
      {activities.length > 0 && (
        <ul className="-mx-4 divide-y divide-slate-100" aria-label={label}>
          {activities.map((a) => (
            <ActivityRow key={a.id} activity={a} units={units} />
          ))}
        </ul>
      )}
      {list.hasNextPage && (
        <div className="mt-4 flex justify-center">
          <Button variant="secondary" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
            Load more
          </Button>
        </div>
      )}
    </>
  );
}
