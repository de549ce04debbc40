import { afterEach, describe, expect, it } from 'vitest';
import { useState } from 'react';
import { cleanup, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { Platform } from '../../../../src/shared/platforms.ts';
import { countPost, parseHashtags } from './length';
import { LengthCounter, PlatformPreviews } from './preview';

afterEach(cleanup);

/** The editor's text field with its counter, as the post editor wires them. */
function Editor({ platform }: { platform: Platform }) {
  const [body, setBody] = useState('');
  const [tags, setTags] = useState('');
  return (
    <>
      <label>
        Text
        <textarea value={body} onChange={(e) => setBody(e.target.value)} />
      </label>
      <label>
        Hashtags
        <input value={tags} onChange={(e) => setTags(e.target.value)} />
      </label>
      <LengthCounter count={countPost(platform, body, parseHashtags(tags))} />
      <PlatformPreviews platform={platform} body={body} hashtags={parseHashtags(tags)} media={[]} author="Acme" />
    </>
  );
}

describe('the length counter', () => {
  it('counts a typed URL as 23 on X, with the hashtags the text lacks', async () => {
    render(<Editor platform="X" />);
    const counter = screen.getByRole('status', { name: 'Length as X counts it' });
    expect(counter).toHaveTextContent('0 / 280');
    await userEvent.type(screen.getByLabelText('Text'), 'New: https://example.com/spring/launch/2026/details');
    expect(counter).toHaveTextContent('28 / 280');
    await userEvent.type(screen.getByLabelText('Hashtags'), 'spring');
    expect(counter).toHaveTextContent('37 / 280'); // "\n\n#spring"
  });

  it('marks a post over the limit and says by how much', () => {
    render(<LengthCounter count={countPost('X', 'a'.repeat(290), [])} />);
    const counter = screen.getByRole('status', { name: 'Length as X counts it' });
    expect(counter).toHaveTextContent('290 / 280');
    expect(counter).toHaveAttribute('data-over', 'true');
    expect(screen.getByText('10 over the limit')).toBeInTheDocument();
  });

  it('does not mark a post within the limit', () => {
    render(<LengthCounter count={countPost('LINKEDIN', 'a'.repeat(3000), [])} />);
    expect(screen.getByRole('status', { name: 'Length as LinkedIn counts it' })).not.toHaveAttribute('data-over');
    expect(screen.queryByText(/over the limit/)).toBeNull();
  });
});

describe('per-platform previews', () => {
  it('show the published text on each platform with its own count; X shortens links', async () => {
    render(
      <PlatformPreviews platform="X" body={'Spring sale: https://shop.example.com/collections/spring-2026'} hashtags={['#sale']} media={[]} author="Acme" />,
    );
    const x = screen.getByRole('article', { name: 'X preview' });
    expect(x).toHaveTextContent('Spring sale: shop.example.com/colle…');
    expect(x).toHaveTextContent('#sale');
    expect(screen.getByRole('status', { name: 'Length in the X preview' })).toHaveTextContent('43 / 280');
    await userEvent.click(screen.getByRole('tab', { name: 'LinkedIn preview' }));
    const linkedin = screen.getByRole('article', { name: 'LinkedIn preview' });
    expect(linkedin).toHaveTextContent('https://shop.example.com/collections/spring-2026');
    expect(screen.getByRole('status', { name: 'Length in the LinkedIn preview' })).toHaveTextContent('68 / 3,000');
  });

  it('shows the attached images', () => {
    render(
      <PlatformPreviews platform="LINKEDIN" body="Look" hashtags={[]} media={[{ url: 'http://localhost/a.png', contentType: 'image/png' }]} author="Acme" />,
    );
    expect(screen.getByRole('article', { name: 'LinkedIn preview' }).querySelector('img')).toHaveAttribute('src', 'http://localhost/a.png');
  });
});
