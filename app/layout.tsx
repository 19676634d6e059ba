import type { Metadata, Viewport } from "next";
import { connection } from "next/server";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Athlete Activity Service", template: "%s · Athlete Activity Service" },
  description: "Athletes' training data, over a versioned API with OAuth and signed webhooks.",
};

export const viewport: Viewport = { width: "device-width", initialScale: 1 };

export default async function RootLayout({ children }: { children: React.ReactNode }) {
  // Every page is rendered for its request, so its scripts carry the nonce of its own answer
  // (proxy.ts): a page built ahead of time would hold none, and its scripts would not run.
  await connection();
  return (
    <html lang="en">
      <body className="min-h-screen font-sans">{children}</body>
    </html>
  );
}
