"use client";

import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { isClientError } from "./console/api";
import { useState, type ReactNode } from "react";

export function Providers({ children }: { children: ReactNode }) {
  const [client] = useState(
    () => new QueryClient({ defaultOptions: {
          queries: {
            staleTime: 10_000,
            refetchOnWindowFocus: false,
            // A 4xx will answer the same again; only failures on the way or on the server are worth one retry.
            retry: (count, error) => count < 1 && !isClientError(error),
          },
        }, }),
  );
  return <QueryClientProvider client={client}>{children}</QueryClientProvider>;
}
