// The console's pages. Hash URLs (#/volumes/...) need no server-side fallback route.
import { createRouter, createWebHashHistory } from 'vue-router';
import { loggedIn, can } from './session.js';
import LoginPage from './pages/LoginPage.vue';
import DashboardPage from './pages/DashboardPage.vue';
import VolumesPage from './pages/VolumesPage.vue';
import VolumePage from './pages/VolumePage.vue';
import SnapshotPage from './pages/SnapshotPage.vue';
import PoliciesPage from './pages/PoliciesPage.vue';
import JobsPage from './pages/JobsPage.vue';
import JobPage from './pages/JobPage.vue';
import AgentsPage from './pages/AgentsPage.vue';
import UsersPage from './pages/UsersPage.vue';
import TokensPage from './pages/TokensPage.vue';
import AuditPage from './pages/AuditPage.vue';
import ClusterPage from './pages/ClusterPage.vue';

/** The navigation: label, route name, and the least role that may open it. */
export const NAV = [
  { label: 'Dashboard', name: 'dashboard', role: 'viewer' },
  { label: 'Volumes', name: 'volumes', role: 'viewer' },
  { label: 'Retention', name: 'policies', role: 'viewer' },
  { label: 'Jobs', name: 'jobs', role: 'viewer' },
  { label: 'Agents', name: 'agents', role: 'operator' },
  { label: 'Cluster', name: 'cluster', role: 'viewer' },
  { label: 'Tokens', name: 'tokens', role: 'admin' },
  { label: 'Users', name: 'users', role: 'admin' },
  { label: 'Audit log', name: 'audit', role: 'admin' }
];

const routes = [
  { path: '/login', name: 'login', component: LoginPage, meta: { title: 'Log in', open: true } },
  { path: '/', name: 'dashboard', component: DashboardPage, meta: { title: 'Dashboard' } },
  { path: '/volumes', name: 'volumes', component: VolumesPage, meta: { title: 'Volumes' } },
  { path: '/volumes/:name', name: 'volume', component: VolumePage, props: true, meta: { title: 'Volume' } },
  { path: '/volumes/:name/snapshots/:snapshot', name: 'snapshot', component: SnapshotPage, props: true, meta: { title: 'Snapshot' } },
  { path: '/policies', name: 'policies', component: PoliciesPage, meta: { title: 'Retention policies' } },
  { path: '/jobs', name: 'jobs', component: JobsPage, meta: { title: 'Jobs' } },
  { path: '/jobs/:id', name: 'job', component: JobPage, props: true, meta: { title: 'Job' } },
  { path: '/agents', name: 'agents', component: AgentsPage, meta: { title: 'Agents', role: 'operator' } },
  { path: '/cluster', name: 'cluster', component: ClusterPage, meta: { title: 'Cluster' } },
  { path: '/users', name: 'users', component: UsersPage, meta: { title: 'Users', role: 'admin' } },
  { path: '/tokens', name: 'tokens', component: TokensPage, meta: { title: 'Tokens', role: 'admin' } },
  { path: '/audit', name: 'audit', component: AuditPage, meta: { title: 'Audit log', role: 'admin' } },
  { path: '/:rest(.*)*', redirect: { name: 'dashboard' } }
];

export const router = createRouter({ history: createWebHashHistory(), routes });

router.beforeEach((to) => {
  if (!to.meta.open && !loggedIn()) {
    return { name: 'login', query: to.fullPath === '/' ? {} : { next: to.fullPath } };
  }
  if (to.meta.role && !can(to.meta.role)) {
    return { name: 'dashboard' };
  }
  return true;
});

router.afterEach((to) => {
  document.title = (to.meta.title ? to.meta.title + ' · ' : '') + 'Holdfast';
});
