/**
 * Drives one benchmark run: starts a server process per engine, runs one agent process per backup
 * and restore, watches peak RSS and thread CPU from /proc, checks every restore by SHA-256, and
 * gathers the per-snapshot figures into tables and JSON.
 */
package org.holdfast.bench.runner;
