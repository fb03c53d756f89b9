import { randomBytes } from "node:crypto"
import pg from "pg"

/** A fresh database on the PostgreSQL server of `adminUrl` for a bench, dropped afterwards. */
export const withFreshDatabase = async <A>(adminUrl: string, use: (url: string) => Promise<A>) => {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  const name = `tp_bench_${randomBytes(6).toString("hex")}`
  await admin.query(`CREATE DATABASE ${name}`)
  try {
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    return await use(url.toString())
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  }
}
