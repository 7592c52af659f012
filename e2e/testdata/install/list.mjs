// The program TestConsumerMatrix runs in a new project outside the repository, with the
// TypeScript SDK installed from its npm pack tarball as sdk/typescript/README.md says:
// it lists the pets.
import { createPetstore } from "@acme-pets/petstore";

const client = createPetstore({ baseUrl: process.env.PETSTORE_URL, apiKey: process.env.PETSTORE_API_KEY });
const names = [];
for await (const pet of client.pets.list({ limit: 2 })) names.push(pet.name);
console.log(`pets: ${names.join(", ")}`);
