import type { TestProject } from 'vitest/node';
import { createEmbeddedTemplate } from '../test/embedded-template.ts';

/** The migrated embedded database each file's server starts from (test/embedded-template.ts). */
export default async function setup(project: TestProject): Promise<() => void> {
  const template = await createEmbeddedTemplate();
  project.provide('embeddedTemplate', template.dir);
  return () => template.dispose();
}
