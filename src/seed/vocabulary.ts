/**
 * The fixed vocabulary and clock of the demo dataset (`./demo.ts`): topics with their keywords,
 * domain nouns and page slugs, names, roles, platforms, and the base date every time is counted
 * from. Changing any of it changes the demo data, which is part of the public fixture contract.
 */
import type { BACKLINK_STATUSES } from '../domain/enums.js';

/** Every date of the dataset lies before this instant (records span the preceding ~6 months). */
export const DEMO_BASE_DATE = '2026-10-01T00:00:00.000Z';

const BASE_MS = Date.parse(DEMO_BASE_DATE);
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** ISO time `ms` milliseconds after the base date (negative: before). */
export const iso = (ms: number) => new Date(BASE_MS + ms).toISOString();
export const pad = (n: number, width = 3) => String(n).padStart(width, '0');

export type SiteSpec = { id: string; projectId: string; name: string; domain: string; topic: Topic };
export type Topic = 'outdoor' | 'travel' | 'tech' | 'bikes';

export const TOPICS: Record<Topic, { keywords: string[]; nouns: string[]; pages: string[] }> = {
  outdoor: {
    keywords: [
      'hiking boots',
      'ultralight tent',
      'trail running shoes',
      'camping stove',
      'rain jacket',
      'sleeping bag',
      'trekking poles',
    ],
    nouns: ['trail', 'summit', 'camp', 'ridge', 'forest', 'basecamp', 'peak', 'outdoor'],
    pages: [
      'best-hiking-boots',
      'tent-buying-guide',
      'gear-list',
      'beginner-hikes',
      'camping-checklist',
      'rain-gear-review',
      'trail-food',
    ],
  },
  travel: {
    keywords: ['budget travel', 'travel insurance', 'carry-on packing', 'city breaks', 'train travel europe'],
    nouns: ['nomad', 'journey', 'passport', 'wander', 'voyage', 'atlas', 'compass'],
    pages: ['packing-list', 'travel-tips', 'city-guide', 'rail-pass-guide', 'budget-itinerary'],
  },
  tech: {
    keywords: ['gps watch', 'weather api', 'route planner', 'offline maps', 'trail app'],
    nouns: ['dev', 'stack', 'byte', 'signal', 'pixel', 'code'],
    pages: ['tools-roundup', 'api-directory', 'resources', 'best-apps', 'integrations'],
  },
  bikes: {
    keywords: ['gravel bike', 'bike maintenance', 'cycling shoes', 'bikepacking bags'],
    nouns: ['pedal', 'gravel', 'spoke', 'chain', 'cadence', 'saddle'],
    pages: ['gravel-guide', 'maintenance-tips', 'bikepacking-kit', 'best-bikes'],
  },
};

export const FIRST_NAMES = [
  'Ana',
  'Ben',
  'Chloe',
  'David',
  'Elena',
  'Farid',
  'Greta',
  'Hugo',
  'Ines',
  'Jonas',
  'Kira',
  'Liam',
  'Maya',
  'Noah',
  'Olga',
  'Pablo',
  'Quinn',
  'Rosa',
  'Sami',
  'Tara',
];
export const LAST_NAMES = [
  'Alder',
  'Brook',
  'Castillo',
  'Dunn',
  'Eriksen',
  'Fischer',
  'Garcia',
  'Hale',
  'Ivanova',
  'Jensen',
  'Khan',
  'Larsen',
  'Moreau',
  'Novak',
  'Okafor',
  'Petrov',
];
export const ROLES: [string, string][] = [
  ['Editor', 'editorial'],
  ['Managing Editor', 'editorial'],
  ['Content Writer', 'editorial'],
  ['Marketing Manager', 'marketing'],
  ['Founder', 'leadership'],
  ['Webmaster', 'technical'],
];
export const PLATFORMS: [string, string[]][] = [
  ['reddit', ['r/hiking', 'r/CampingGear', 'r/Ultralight', 'r/travel', 'r/gravelcycling']],
  ['hackernews', ['Ask HN', 'Show HN']],
  ['x', ['search: hiking boots', 'search: travel tips']],
  ['linkedin', ['feed']],
  ['quora', ['Camping', 'Travel Planning']],
];
export const CATEGORIES = ['guest_post', 'resource_page', 'mention', 'directory', 'forum', 'link_insertion'];
export const OPPORTUNITIES = ['resource_page', 'guest_post', 'link_insertion', 'broken_link', 'roundup'];
export const PURPOSES = ['link_insertion', 'guest_post', 'broken_link', 'partnership'];

/** The backlink status that each check outcome leads to, for consistent histories. */
export const CHECK_STATUS_OF: Record<(typeof BACKLINK_STATUSES)[number], string> = {
  pending: 'pending',
  live: 'live',
  changed: 'changed',
  lost: 'lost',
  blocked: 'blocked',
  error: 'error',
  closed: 'lost',
};
