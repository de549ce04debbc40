// Testing Library's DOM matchers (toBeInTheDocument, toHaveAttribute, …) for the panel's component tests.
import '@testing-library/jest-dom/vitest';
